#pragma once
// A method comparison (figures with a `baseline` line; configs/methods.toml's compare_*): each
// line ranked by its figure's metric averaged over the test lengths beyond the baseline's l_train
// (or over a range of them: TestRange; the same lengths for every line, whatever length it trained
// at), and compared with the baseline seed by seed: runs of one seed share
// their initial weights and batches, so each seed both have is a pair, and the pairs' differences
// are tested (stats/paired_test.hpp), where both runs of the pair fit their training range
// (results/in_range_fit.hpp). report.md's table and verdicts
// (report/comparison_report.hpp) and the compare figure (plots/gnuplot_compare.hpp) read these.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "stats/paired_test.hpp"

namespace lenlab {

// One line of a compared figure, over its seeds' runs.
struct ComparedLine {
  std::string label;
  int n_seeds = 0;
  double mean = 0, min = 0, max = 0;  // of each run's metric averaged over the figure's range
  int rank = 0;                       // 1 = best by the mean; 0 without runs
  // Seed by seed against the baseline's run with the same seed (the same initial weights and
  // data): in how many of the seeds both have (seeds_paired) this line did better (seeds_better;
  // a tie counts for neither). 0 and 0 for the baseline itself.
  int seeds_better = 0, seeds_paired = 0;
  // The paired test of those seeds (this line − the baseline); none for the baseline itself or
  // without a seed in common.
  std::optional<PairedComparison> paired;
  bool not_finite = false;  // a paired seed's average is not finite (+inf MSE): not tested
  // The learned-in-range gate (results/in_range_fit.hpp): this line's seeds whose run did not fit
  // its own training range (ascending). Their pairs, and those of the baseline's unfit seeds, enter
  // no test; the mean, min, max and rank above still count every run.
  std::vector<uint64_t> seeds_not_fit;
  std::string in_range_rule;  // the rule's text, for the verdict line
  // The baseline fit its training range in fewer than half of its seeds: the figure is not judged.
  bool baseline_unfit = false;
  bool lower_is_better = true;  // the figure's metric: an error (mse, cross-entropy) or a fraction
};

// Which test lengths a comparison averages over, in multiples of the baseline's l_train (each
// run's own in a figure without a baseline run): lo·l_train < length ≤ hi·l_train. The default,
// every length beyond l_train.
struct TestRange {
  double lo = 1, hi = std::numeric_limits<double>::infinity();
  std::string label() const;  // "beyond l_train", "(1×, 4×] l_train", …
};

// The ranges report.md also compares each figure in, as the issue of a verdict measured only up to
// 4× l_train taught: up to 4×, then up to 8× and up to 16× (a range without lengths is left out).
std::vector<TestRange> comparison_ranges();

// The lines of a figure with a baseline, ranked (lower is better for the MSE and cross-entropies,
// higher for accuracy and exact match) by their metric averaged over `range`. Exposed for tests.
std::vector<ComparedLine> compare_lines(const FigureSummary& fig, const TestRange& range = {});

// The figure's baseline line, when it has runs; nullptr otherwise.
const FigureLine* baseline_with_runs(const FigureSummary& fig);

// Whether any run of the figure has a result row in `range`.
bool has_lengths_in(const FigureSummary& fig, const TestRange& range);

}  // namespace lenlab
