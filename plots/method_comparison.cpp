#include "plots/method_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "results/figure_metric.hpp"
#include "results/in_range_fit.hpp"

namespace lenlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The l_train a figure's test range counts in: its baseline's (every line is then averaged over
// the same test lengths, so that a seed's pair compares like with like where lines train at other
// lengths: paper 004's baseline at T against its oracle at 2T); 0 without a baseline run: each
// run's own.
int reference_l_train(const FigureSummary& fig) {
  const FigureLine* base = baseline_with_runs(fig);
  return base ? base->runs.front()->spec.l_train : 0;
}

bool in_range(const LengthResult& row, const RunRecord& r, int reference, const TestRange& range) {
  const int l = reference > 0 ? reference : r.spec.l_train;
  return row.length > range.lo * l && row.length <= range.hi * l;
}

// A run's metric averaged over its result rows in `range` (passkey: every (length, depth) cell,
// the same depths at every length); NaN when it has none.
double range_mean(const RunRecord& r, int reference, const std::string& metric,
                  const TestRange& range) {
  double sum = 0;
  int n = 0;
  for (const LengthResult& row : r.results)
    if (in_range(row, r, reference, range)) {
      sum += metric_value(row, metric);
      ++n;
    }
  return n > 0 ? sum / n : kNaN;
}

}  // namespace

const FigureLine* baseline_with_runs(const FigureSummary& fig) {
  const auto base = std::find_if(fig.lines.begin(), fig.lines.end(), [&](const FigureLine& l) {
    return l.label == fig.spec->baseline && !l.runs.empty();
  });
  return base == fig.lines.end() ? nullptr : &*base;
}

std::string TestRange::label() const {
  if (lo == 1 && std::isinf(hi)) return "beyond l_train";
  if (std::isinf(hi)) return fmt::format("beyond {}× l_train", lo);
  return fmt::format("({}×, {}×] l_train", lo, hi);
}

std::vector<TestRange> comparison_ranges() {
  return {{1, 4}, {4, 8}, {8, 16}};
}

bool has_lengths_in(const FigureSummary& fig, const TestRange& range) {
  const int reference = reference_l_train(fig);
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs)
      for (const LengthResult& row : r->results)
        if (in_range(row, *r, reference, range)) return true;
  return false;
}

std::vector<ComparedLine> compare_lines(const FigureSummary& fig, const TestRange& range) {
  const std::string& metric = fig.spec->metric;
  const bool higher_better = metric_is_fraction(metric);
  const int reference = reference_l_train(fig);
  std::vector<ComparedLine> out;
  std::vector<std::map<uint64_t, double>> by_seed;  // per line: seed → its run's beyond mean
  std::vector<std::map<uint64_t, bool>> fits;       // per line: seed → it enters a test
  for (const FigureLine& line : fig.lines) {
    ComparedLine c;
    c.label = line.label;
    c.lower_is_better = !higher_better;
    c.mean = c.min = c.max = kNaN;
    std::vector<double> v;
    by_seed.emplace_back();
    fits.emplace_back();
    for (const RunRecord* r : line.runs)
      if (const double x = range_mean(*r, reference, metric, range); !std::isnan(x)) {
        v.push_back(x);
        by_seed.back()[r->spec.seed] = x;
        const InRangeFit fit = in_range_fit(*r);
        fits.back()[r->spec.seed] = fit.enters();
        if (!fit.enters()) c.seeds_not_fit.push_back(r->spec.seed);
        c.in_range_rule = fit.rule.text();
      }
    std::sort(c.seeds_not_fit.begin(), c.seeds_not_fit.end());
    c.n_seeds = static_cast<int>(v.size());
    if (!v.empty()) {
      double sum = 0;
      for (double x : v) sum += x;
      c.mean = sum / static_cast<double>(v.size());
      c.min = *std::min_element(v.begin(), v.end());
      c.max = *std::max_element(v.begin(), v.end());
    }
    out.push_back(c);
  }
  // Ranks by the mean (ties share the better rank).
  for (ComparedLine& c : out) {
    if (c.n_seeds == 0) continue;
    c.rank = 1;
    for (const ComparedLine& o : out)
      if (o.n_seeds > 0 && (higher_better ? o.mean > c.mean : o.mean < c.mean)) ++c.rank;
  }
  const auto base = std::find_if(
      out.begin(), out.end(), [&](const ComparedLine& c) { return c.label == fig.spec->baseline; });
  if (base != out.end() && base->n_seeds > 0) {
    const std::map<uint64_t, double>& base_seeds = by_seed[base - out.begin()];
    const std::map<uint64_t, bool>& base_fits = fits[base - out.begin()];
    // A baseline that did not learn its own range in most seeds is no yardstick for extrapolation.
    const bool baseline_unfit = 2 * base->seeds_not_fit.size() > base_fits.size();
    for (size_t i = 0; i < out.size(); ++i) {
      ComparedLine& c = out[i];
      c.baseline_unfit = baseline_unfit;
      if (c.n_seeds == 0 || &c == &*base || baseline_unfit) continue;
      std::vector<double> mine, theirs;  // in the order of the line's seeds
      for (const auto& [seed, x] : by_seed[i])
        if (const auto b = base_seeds.find(seed);
            b != base_seeds.end() && fits[i].at(seed) && base_fits.at(seed)) {
          mine.push_back(x);
          theirs.push_back(b->second);
        }
      const auto finite = [](const std::vector<double>& v) {
        return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
      };
      if (mine.empty()) continue;
      if (!finite(mine) || !finite(theirs)) {  // e.g. an MSE of +inf: no difference to test
        c.not_finite = true;
        continue;
      }
      c.paired = compare_paired(mine, theirs, !higher_better);
      c.seeds_paired = c.paired->n;
      c.seeds_better = c.paired->wins;
    }
  }
  return out;
}

}  // namespace lenlab
