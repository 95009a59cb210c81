#pragma once
// report.md's "Token tasks" section: for every figure of token tasks (its metric is not the MSE),
// per line the metric inside and beyond the training range and how far the line generalizes,
// judged against fixed thresholds; for passkey depth figures also the metric by depth.
#include <string>
#include <vector>

#include "plots/figure_data.hpp"

namespace lenlab {

// A line "generalizes" at a length while its seed-mean token accuracy or exact match stays at or
// above kAccuracyThreshold, or its seed-mean excess cross-entropy at or below kExcessThreshold
// (nats). Raw cross-entropy has no threshold: its scale depends on the task's vocabulary.
inline constexpr double kAccuracyThreshold = 0.9;
inline constexpr double kExcessThreshold = 0.1;

// generalizes_to's answer for a metric without a threshold (cross_entropy).
inline constexpr int kNoThreshold = -1;

// The longest x (test length; position for a position plot) up to which `mean` passes the metric's
// threshold at every x tested before it too; 0 when the first x already misses (or none is
// tested); kNoThreshold for cross_entropy. x ascending, mean [x].
int generalizes_to(const std::vector<int>& x, const std::vector<double>& mean,
                   const std::string& metric);

// A token figure's per-line numbers (exposed for tests). Means over x are of the seed-means; NaN
// where no x is in the range.
struct TokenLineStats {
  int n_seeds = 0;
  double train_loss = 0;  // the final training cross-entropy, mean over seeds
  double within = 0;      // mean over x in 1..l_train
  double beyond = 0;      // mean over x > l_train
  double at_longest = 0;  // at the largest x
  int generalizes_to = 0;
  // Depth plots: per line.depths, the metric averaged over the lengths beyond l_train.
  std::vector<double> by_depth_beyond;
};
TokenLineStats token_line_stats(const FigureLine& line, const std::string& metric);

// "## Token tasks" with a part per token figure of `figures`; empty when there is none.
std::string token_tasks_section(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
