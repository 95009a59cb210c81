#include "train/temperature_search.hpp"

#include <cmath>
#include <stdexcept>

namespace lenlab {

std::string align_name(AlignBy by) {
  return by == AlignBy::kMaxProb ? "auto-pmax" : "auto-entropy";
}

std::vector<double> temperature_grid() {
  std::vector<double> grid;
  for (int i = 0; i <= 10; ++i) grid.push_back(1.0 - 0.05 * i);
  return grid;
}

double mean_statistic(const AttentionStats& stats, AlignBy by) {
  const std::vector<double>& v = by == AlignBy::kMaxProb ? stats.max_prob : stats.entropy;
  if (v.empty()) throw std::invalid_argument("mean_statistic: no attention statistics");
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double closest_temperature(const std::vector<double>& grid,
                           const std::function<double(double)>& statistic, double target) {
  if (grid.empty()) throw std::invalid_argument("closest_temperature: an empty grid");
  double best = grid.front(), best_gap = INFINITY;
  for (double tau : grid) {
    const double gap = std::abs(statistic(tau) - target);
    if (gap < best_gap || (gap == best_gap && tau > best)) {
      best = tau;
      best_gap = gap;
    }
  }
  return best;
}

}  // namespace lenlab
