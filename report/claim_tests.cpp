#include "report/claim_tests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/number_text.hpp"
#include "report/report.hpp"

namespace lenlab::claims {

RunMse run_mse(const RunRecord& r) {
  RunMse m;
  double in = 0, out = 0;
  int n_in = 0, n_out = 0, longest = 0;
  for (const LengthResult& row : r.results) {
    if (row.length <= r.spec.l_train) {
      in += row.mse;
      ++n_in;
    } else {
      out += row.mse;
      ++n_out;
      m.max_beyond = n_out == 1 ? row.mse : std::max(m.max_beyond, row.mse);
    }
    if (row.length > longest) longest = row.length, m.at_l_test = row.mse;
  }
  if (n_in) m.within = in / n_in;
  if (n_out) m.beyond = out / n_out;
  return m;
}

// seed → a number of the line's run with that seed.
std::map<uint64_t, double> by_seed(const FigureLine& l, double RunMse::*what) {
  std::map<uint64_t, double> out;
  for (const RunRecord* r : l.runs) out[r->spec.seed] = run_mse(*r).*what;
  return out;
}

const FigureLine* line_of(const FigureSummary& f, const std::string& label) {
  for (const FigureLine& l : f.lines)
    if (l.label == label && !l.runs.empty()) return &l;
  return nullptr;
}

// The lines of an l_train figure in order of l_train.
std::vector<const FigureLine*> by_l_train(const FigureSummary& f) {
  std::vector<const FigureLine*> rows;
  for (const FigureLine& l : f.lines)
    if (!l.runs.empty()) rows.push_back(&l);
  std::sort(rows.begin(), rows.end(), [](const FigureLine* a, const FigureLine* b) {
    return a->spec.l_train < b->spec.l_train;
  });
  return rows;
}

std::string step_key(const FigureSummary& f, const FigureLine& from, const FigureLine& to) {
  return fmt::format("{}:{}->{}", f.spec->name, from.spec.l_train, to.spec.l_train);
}

void ClaimTests::add(const std::string& key, const std::map<uint64_t, double>& method,
                     const std::map<uint64_t, double>& baseline) {
  std::vector<double> a, b;
  for (const auto& [seed, x] : method)
    if (const auto it = baseline.find(seed);
        it != baseline.end() && std::isfinite(x) && std::isfinite(it->second)) {
      a.push_back(x);
      b.push_back(it->second);
    }
  if (a.empty()) return;
  keys_.push_back(key);
  tests_.push_back(compare_paired(a, b, /*lower_is_better=*/true));
}

void ClaimTests::adjust() {
  std::vector<double> p;
  for (const PairedComparison& t : tests_) p.push_back(t.p_wilcoxon);
  adjusted_ = holm_adjust(p);
}

VerdictWord ClaimTests::word_of(const std::string& key) const {
  const int i = index(key);
  if (i < 0) return VerdictWord::kNotJudged;
  return verdict_word(&tests_[i], /*lower_is_better=*/true, adjusted_[i]);
}

std::string ClaimTests::numbers(const std::string& key) const {
  const int i = index(key);
  if (i < 0) return "no seed in common: not tested";
  const PairedComparison& t = tests_[i];
  return fmt::format("difference {} ({} to {}), lower in {}/{} seeds, adjusted p = {:.2g}",
                     number_or_dash(t.mean_difference), number_or_dash(t.interval_low),
                     number_or_dash(t.interval_high), t.wins, t.n, adjusted_[i]);
}

int ClaimTests::index(const std::string& key) const {
  const auto it = std::find(keys_.begin(), keys_.end(), key);
  return it == keys_.end() ? -1 : static_cast<int>(it - keys_.begin());
}

// Every paired comparison the claims make, in one family.
ClaimTests claim_tests(const std::vector<const FigureSummary*>& reparam,
                       const std::vector<const FigureSummary*>& l_train) {
  ClaimTests tests;
  for (const FigureSummary* f : reparam) {
    const FigureLine* id = line_of(*f, "identity");
    if (!id) continue;
    const auto base = by_seed(*id, &RunMse::beyond);
    const FigureLine* best = nullptr;
    const FigureLine* runner_up = nullptr;
    for (const FigureLine& l : f->lines) {
      if (l.runs.empty()) continue;
      if (!best || line_stats(l).mse_beyond < line_stats(*best).mse_beyond)
        runner_up = best, best = &l;
      else if (!runner_up || line_stats(l).mse_beyond < line_stats(*runner_up).mse_beyond)
        runner_up = &l;
      if (l.label != "identity")
        tests.add(f->spec->name + ":" + l.label, by_seed(l, &RunMse::beyond), base);
    }
    // The lowest against invsqrt, or invsqrt (the lowest) against the runner-up.
    const FigureLine* invsqrt = line_of(*f, "invsqrt");
    const FigureLine* other = best && best->label == "invsqrt" ? runner_up : invsqrt;
    if (best && other && best != other)
      tests.add(f->spec->name + ":best", by_seed(*best, &RunMse::beyond),
                by_seed(*other, &RunMse::beyond));
  }
  for (const FigureSummary* f : l_train) {
    const std::vector<const FigureLine*> rows = by_l_train(*f);
    for (size_t i = 1; i < rows.size(); ++i)
      tests.add(step_key(*f, *rows[i - 1], *rows[i]), by_seed(*rows[i], &RunMse::at_l_test),
                by_seed(*rows[i - 1], &RunMse::at_l_test));
  }
  tests.adjust();
  return tests;
}

}  // namespace lenlab::claims
