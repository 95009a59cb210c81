#pragma once
// A method comparison (figures with a `baseline` line; configs/methods.toml's compare_*): each
// line ranked by its figure's metric averaged over the test lengths beyond l_train (or over a
// range of them: TestRange), and marked
// where it differs from the baseline by more than the seed spread: its seeds' min–max range of
// that average does not overlap the baseline's (the bands the figure draws, reduced to one number
// per run). report.md's table (report/comparison_report.hpp) and the compare figure
// (plots/gnuplot_compare.hpp) both read these.
#include <limits>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"

namespace lenlab {

// One line of a compared figure, over its seeds' runs.
struct ComparedLine {
  std::string label;
  int n_seeds = 0;
  double mean = 0, min = 0, max = 0;  // of each run's metric averaged beyond l_train
  int rank = 0;                       // 1 = best by the mean; 0 without runs
  // Versus the baseline: +1 better beyond the seed spread, −1 worse beyond it, 0 within it.
  int versus_baseline = 0;
  // Seed by seed against the baseline's run with the same seed (the same initial weights and
  // data): in how many of the seeds both have (seeds_paired) this line did better (seeds_better;
  // a tie counts for neither). 0 and 0 for the baseline itself.
  int seeds_better = 0, seeds_paired = 0;
};

// Which test lengths a comparison averages over, in multiples of l_train: lo·l_train < length ≤
// hi·l_train. The default, every length beyond l_train.
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

// Whether any run of the figure has a result row in `range`.
bool has_lengths_in(const FigureSummary& fig, const TestRange& range);

}  // namespace lenlab
