#include "report/paper_claims.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "report/claim_tests.hpp"
#include "report/number_text.hpp"
#include "report/report.hpp"
#include "report/setup_text.hpp"
#include "report/verdict_words.hpp"
#include "results/in_range_fit.hpp"
#include "stats/paired_test.hpp"
#include "theory/paper_closed_form.hpp"

namespace lenlab {

namespace {

using claims::by_l_train;
using claims::by_seed;
using claims::ClaimTests;
using claims::line_of;
using claims::run_mse;
using claims::RunMse;
using claims::step_key;

const FigureSummary* find(const std::vector<FigureSummary>& figs, const std::string& name) {
  for (const FigureSummary& f : figs)
    if (f.spec->name == name)
      return f.spec->metric == "mse" && f.spec->plot == "length" ? &f : nullptr;
  return nullptr;
}

bool complete(const FigureSummary& f) {
  for (const FigureLine& l : f.lines)
    if (l.runs.empty() || l.x.empty()) return false;
  return true;
}

std::string word(bool ok) {
  return ok ? "**supported**" : "**not supported**";
}

// "(figure 1b; length, 2 layers × d_model 64, 2000 steps, l_train 20; lengths 21..80 = (1×, 4×]
// l_train; 3 seeds per line)" — the setup every claim names.
std::string setup_of(const FigureSummary& f) {
  const FigureRuns r = figure_runs(f);
  const bool varies_pe = f.spec->vary == "pe";
  const bool varies_l_train = f.spec->vary == "l_train";
  const TrainSpec& first = f.lines.front().runs.front()->spec;
  return fmt::format("(paper 000, figure {}; {}; {}; {} per line)", f.spec->name,
                     setup_text(first, !varies_pe, !varies_l_train),
                     varies_l_train ? "lengths past each line's l_train"
                                    : beyond_range_text(first.l_train, longest_length(r.runs)),
                     seeds_per_line_text(r));
}

// The in-range gate, as every claim states it: which lines have runs that did not fit their own
// training range (they are judged with the rest, as the paper's figure draws them).
std::string gate_of(const FigureSummary& f) {
  std::string unfit;
  std::string rule;
  for (const FigureLine& l : f.lines) {
    std::vector<uint64_t> seeds;
    for (const RunRecord* r : l.runs) {
      const InRangeFit fit = in_range_fit(*r);
      rule = fit.rule.text();
      if (!fit.enters()) seeds.push_back(r->spec.seed);
    }
    if (!seeds.empty())
      unfit += fmt::format("{}{} ({})", unfit.empty() ? "" : ", ", l.label, seed_list(seeds));
  }
  if (f.spec->vary == "l_train")  // a threshold per line: the rule in words
    rule = "MSE ≤ 1 % of the target's variance inside each line's 1..l_train";
  if (unfit.empty()) return " Every run fits its training range (" + rule + ").";
  return fmt::format(
      " Runs that did not fit their training range ({}): {}; they are counted above as the "
      "paper's figure draws them.",
      rule, unfit);
}

// Claim: a mean task generalizes with NoPE — its error beyond l_train stays far below that of the
// best constant predictor, whose MSE at length l is the target's variance there. Per seed.
std::string claim_mean(const FigureSummary& f, const std::string& what, double variance_at_l_test) {
  const FigureLine* nope = line_of(f, "nope");
  if (!nope) return "";
  int below = 0;
  std::string seeds;
  for (const auto& [seed, x] : by_seed(*nope, &RunMse::max_beyond)) {
    below += x < 0.1 * variance_at_l_test;
    seeds += fmt::format("{}{}", seeds.empty() ? "" : ", ", number_or_dash(x));
  }
  const int n = static_cast<int>(nope->runs.size());
  std::string others;
  for (const FigureLine& l : f.lines)
    if (l.label != "nope" && !l.runs.empty())
      others += fmt::format("{} {}; ", l.label, number_or_dash(line_stats(l).mse_max_beyond));
  return fmt::format(
      "- *{}* {}: with NoPE the largest test MSE beyond l_train is, seed by seed, {}, against {} "
      "for the best constant predictor at l_test (the target's variance). Criterion: more than "
      "10x below it in every seed: {}/{}: {}. (Largest MSE beyond l_train with the other "
      "encodings, mean over seeds: {}){}\n",
      what, setup_of(f), seeds, number_or_dash(variance_at_l_test), below, n, word(below == n),
      others.empty() ? "none" : others.substr(0, others.size() - 2), gate_of(f));
}

// Claim: a task fails past l_train with every PE — in every run, the error at l_test is at least
// 100x its error inside the training range, and at least 1 (off by more than one unit).
std::string claim_fails(const FigureSummary& f, const std::string& task) {
  int fail_runs = 0, runs = 0;
  std::string detail;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    int k = 0;
    for (const RunRecord* r : l.runs) {
      const RunMse m = run_mse(*r);
      k += m.at_l_test >= 1 && m.at_l_test >= 100 * m.within;
    }
    fail_runs += k;
    runs += static_cast<int>(l.runs.size());
    const LineStats s = line_stats(l);
    detail +=
        fmt::format("{}: {} → {} (fails in {}/{} seeds); ", l.label, number_or_dash(s.mse_within),
                    number_or_dash(s.mse_at_l_test), k, l.runs.size());
  }
  return fmt::format(
      "- *{} prediction fails past l_train with every positional encoding* {}: test MSE within "
      "1..l_train → at l_test, mean over seeds: {}. Criterion: in every run, MSE at l_test >= 1 "
      "and >= 100x its in-range MSE: {}/{} runs: {}.{}\n",
      task, setup_of(f), detail.substr(0, detail.size() - 2), fail_runs, runs,
      word(fail_runs == runs), gate_of(f));
}

// The word of a claim made of paired comparisons that must all go one way.
std::string all_lower(const std::vector<VerdictWord>& words) {
  const bool all = std::all_of(words.begin(), words.end(),
                               [](VerdictWord w) { return w == VerdictWord::kHelps; });
  const bool against = std::any_of(words.begin(), words.end(),
                                   [](VerdictWord w) { return w == VerdictWord::kHurts; });
  if (all && !words.empty()) return word(true);
  if (against) return word(false);
  return "**not decided** (a comparison shows no detectable difference with these seeds)";
}

// Claim: every reparam helps (beyond-range MSE below identity's, paired by seed), 1/√ most.
std::string claim_reparam(const FigureSummary& f, const std::string& task,
                          const ClaimTests& tests) {
  const FigureLine* id = line_of(f, "identity");
  if (!id) return "";
  std::vector<VerdictWord> words;
  std::string detail;
  std::string best;
  double best_mse = INFINITY;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    const double m = line_stats(l).mse_beyond;
    if (m < best_mse) best_mse = m, best = l.label;
    if (l.label == "identity") continue;
    const std::string key = f.spec->name + ":" + l.label;
    const VerdictWord w = tests.word_of(key);
    words.push_back(w);
    const std::string said = w == VerdictWord::kHelps   ? "lower"
                             : w == VerdictWord::kHurts ? "higher"
                                                        : verdict_name(w);
    detail += fmt::format("{} {} ({}: {}); ", l.label, number_or_dash(m), said, tests.numbers(key));
  }
  const std::string best_word =
      best != "invsqrt" ? (tests.word_of(f.spec->name + ":best") == VerdictWord::kHelps
                               ? word(false)
                               : "**not decided** (the best is not clearly below invsqrt)")
      : tests.word_of(f.spec->name + ":best") == VerdictWord::kHelps
          ? word(true)
          : "**not decided** (invsqrt is lowest on average, not clearly below the runner-up)";
  return fmt::format(
      "- *Every reparameterization helps on {} prediction, 1/√ most* {}: mean test MSE beyond "
      "l_train, identity {}; each f paired with identity seed by seed: {}. Every f below "
      "identity: {}; the lowest on average is '{}' ({}): {}.{}\n",
      task, setup_of(f), number_or_dash(line_stats(*id).mse_beyond),
      detail.substr(0, detail.size() - 2), all_lower(words), best,
      tests.numbers(f.spec->name + ":best"), best_word, gate_of(f));
}

// Claim: a longer training range helps (the MSE at l_test falls with every longer l_train, paired
// by seed) but the error still grows with length beyond l_train (Spearman > 0.9 on every line).
std::string claim_l_train(const FigureSummary& f, const std::string& task,
                          const ClaimTests& tests) {
  const std::vector<const FigureLine*> rows = by_l_train(f);
  std::vector<VerdictWord> words;
  bool trend = true;
  std::string detail, steps;
  for (size_t i = 0; i < rows.size(); ++i) {
    const LineStats s = line_stats(*rows[i]);
    trend = trend && s.beyond_trend > 0.9;
    detail += fmt::format("l_train {}: {} (trend {:.2f}); ", rows[i]->spec.l_train,
                          number_or_dash(s.mse_at_l_test), s.beyond_trend);
    if (i == 0) continue;
    const std::string key = step_key(f, *rows[i - 1], *rows[i]);
    words.push_back(tests.word_of(key));
    steps += fmt::format("{} → {}: {}; ", rows[i - 1]->spec.l_train, rows[i]->spec.l_train,
                         tests.numbers(key));
  }
  return fmt::format(
      "- *A longer training range helps {} prediction, but the error still grows with length* "
      "{}: test MSE at l_test, mean over seeds: {}. Each longer l_train against the one before, "
      "paired by seed: {}. Falls with every longer l_train: {}; grows with length beyond l_train "
      "on every line (Spearman > 0.9 on the mean curve): {}.{}\n",
      task, setup_of(f), detail.substr(0, detail.size() - 2),
      steps.empty() ? "none" : steps.substr(0, steps.size() - 2),
      rows.size() >= 2 ? all_lower(words) : word(false), word(trend), gate_of(f));
}

// Theorem 2 (Appendix B.1): the error past l_train grows as (l − a)² for length and sum, stays
// O(1) for mean. The exponent p of c·(l − a)^p is fitted to each line's mean MSE beyond l_train
// only where that error rises well above the in-range error (LineStats::flat): within
// [1.5, 2.5] for length/sum on every line; for mean every line flat or |p| < 0.5.
std::string claim_growth(const FigureSummary& f, bool quadratic) {
  bool all = true;
  std::string detail;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    const LineStats s = line_stats(l);
    if (s.flat) {
      all = all && !quadratic;  // no growth is O(1), and not (l − a)²
      detail += fmt::format("{} flat: no growth to fit ({} beyond against {} within); ", l.label,
                            number_or_dash(s.mse_beyond), number_or_dash(s.mse_within));
      continue;
    }
    const bool ok = s.growth.ok() && (quadratic ? (s.growth.p >= 1.5 && s.growth.p <= 2.5)
                                                : std::abs(s.growth.p) < 0.5);
    all = all && ok;
    detail += s.growth.ok() ? fmt::format("{} p = {:.2f}; ", l.label, s.growth.p)
                            : fmt::format("{} (no fit); ", l.label);
  }
  std::string theory;
  if (quadratic)
    if (const FigureLine* nope = line_of(f, "nope")) {
      const TrainSpec& s = nope->spec;
      const double predicted = s.task == "length" ? paper_length_error(s.l_train, s.l_test)
                                                  : paper_sum_error(s.l_train, s.l_test);
      theory = fmt::format(
          " The closed form predicts an MSE of {} at l_test = {}; NoPE measured {}.",
          number_or_dash(predicted), s.l_test, number_or_dash(line_stats(*nope).mse_at_l_test));
    }
  return fmt::format(
      "- *Theorem 2: the {} error grows {} past l_train* {}: exponent p of c·(l − a)^p fitted "
      "({}) to the mean MSE beyond l_train where it rises to at least 10x the in-range MSE and "
      "above 1 % of the target's variance (else flat: no growth to fit): {}. Criterion: {}: "
      "{}.{}{}\n",
      f.lines.front().spec.task, quadratic ? "as (l − a)²" : "no faster than O(1)", setup_of(f),
      quadratic ? "a too" : "a = l_train", detail.substr(0, detail.size() - 2),
      quadratic ? "1.5 <= p <= 2.5 on every line" : "every line flat or |p| < 0.5", word(all),
      theory, gate_of(f));
}

}  // namespace

std::string paper_claims(const std::vector<FigureSummary>& figures) {
  const auto get = [&](const char* name) -> const FigureSummary* {
    const FigureSummary* f = find(figures, name);
    return f && complete(*f) ? f : nullptr;
  };
  std::vector<const FigureSummary*> reparam, l_train;
  for (const char* name : {"1c", "4b"})
    if (const FigureSummary* f = get(name)) reparam.push_back(f);
  for (const char* name : {"3b", "3a"})
    if (const FigureSummary* f = get(name)) l_train.push_back(f);
  const ClaimTests tests = claims::claim_tests(reparam, l_train);
  std::string claims;
  if (const FigureSummary* f = get("1a")) {
    const double l = f->lines.front().spec.l_test;
    claims += claim_mean(*f, "Mean prediction generalizes with NoPE", 1.0 / (4 * l));
  }
  if (const FigureSummary* f = get("5")) {
    const double l = f->lines.front().spec.l_test;
    // #ones uniform in 0..l: Var(k/l) = ((l+1)² − 1)/12 / l² = (l + 2)/(12 l).
    claims += claim_mean(*f, "Mean prediction generalizes when #ones is uniform in 0..l",
                         (l + 2) / (12 * l));
  }
  if (const FigureSummary* f = get("1b")) claims += claim_fails(*f, "Length");
  if (const FigureSummary* f = get("4a")) claims += claim_fails(*f, "Sum");
  if (const FigureSummary* f = get("1c")) claims += claim_reparam(*f, "length", tests);
  if (const FigureSummary* f = get("4b")) claims += claim_reparam(*f, "sum", tests);
  if (const FigureSummary* f = get("3b")) claims += claim_l_train(*f, "length", tests);
  if (const FigureSummary* f = get("3a")) claims += claim_l_train(*f, "sum", tests);
  if (const FigureSummary* f = get("1b")) claims += claim_growth(*f, true);
  if (const FigureSummary* f = get("4a")) claims += claim_growth(*f, true);
  if (const FigureSummary* f = get("1a")) claims += claim_growth(*f, false);
  if (claims.empty() || tests.size() == 0) return claims;
  return fmt::format(
             "The comparisons below (each reparameterization against identity, the lowest against "
             "its runner-up, each longer l_train against the one before) are paired by seed "
             "(Wilcoxon signed-rank, exact), their p adjusted (Holm) over these {} comparisons; "
             "with fewer than 6 seeds even a difference in every seed has p >= 0.0625 before the "
             "adjustment, so such a claim stays not decided until more seeds are run "
             "(`--seeds`).\n\n",
             tests.size()) +
         claims;
}

}  // namespace lenlab
