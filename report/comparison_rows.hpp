#pragma once
// Every method comparison of a report as flat rows, one per (figure, test range, line): the
// judgement report.md's "Method comparison" renders (report/comparison_verdicts.hpp), as a table
// for other readers (the Python module's lenlab.compare(), a DataFrame). Numbers a row does not
// have (a line without runs, the baseline's own test) are NaN.
#include <string>
#include <vector>

#include "plots/figure_data.hpp"

namespace lenlab {

struct ComparisonRow {
  std::string figure, task, pe, metric;  // task and pe: the line's own (its first seed's run)
  std::string range;      // TestRange::label(): "beyond l_train", "(1×, 4×] l_train"
  double lo = 1, hi = 0;  // the range in multiples of l_train: lo < length/l_train ≤ hi
  bool main = true;       // the figure's main comparison (report.md's verdicts)
  std::string method, baseline;
  bool is_baseline = false;
  int n_seeds = 0;
  double mean = 0, min = 0, max = 0;  // over seeds of each run's metric averaged over the range
  int rank = 0;                       // 1 = best by the mean; 0 without runs
  int seeds_better = 0, seeds_paired = 0;
  // The paired test against the baseline (stats/paired_test.hpp); NaN without one.
  double mean_difference = 0, interval_low = 0, interval_high = 0, median_difference = 0;
  double p_sign = 0, p_wilcoxon = 0;
  double p_adjusted = 0;  // Holm over every test of the report
  double smallest_detectable = 0;
  // "helps", "hurts", "no detectable difference", "not judged" (report/verdict_words.hpp), or
  // "baseline" for the baseline's own row.
  std::string verdict;
  std::string reason;  // why a line is not judged; empty otherwise
  // The learned-in-range gate (results/in_range_fit.hpp): this line's seeds whose run did not fit
  // its training range ("2, 5"; empty when none), and the rule.
  std::string seeds_not_fit, in_range_rule;
};

// In judge_comparisons' order: each figure with a baseline, its main comparison first, then its
// test ranges; in each, the figure's lines in order.
std::vector<ComparisonRow> comparison_rows(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
