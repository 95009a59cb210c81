#include "train/temperature_search.hpp"

#include <cmath>
#include <stdexcept>

namespace lenlab {

std::string align_name(AlignBy by) {
  return by == AlignBy::kMaxProb ? "auto-pmax" : "auto-entropy";
}

std::vector<double> temperature_grid(double lowest, double step) {
  if (!(lowest > 0 && lowest <= 1) || !(step > 0) || !std::isfinite(step))
    throw std::invalid_argument("temperature_grid: need 0 < lowest <= 1 and a finite step > 0");
  // Values within a millionth of a step of `lowest` are `lowest` (0.05 · 10 is not exactly 0.5).
  const double tolerance = 1e-6 * step;
  const double n_steps = std::floor((1.0 - lowest) / step + 1e-6);
  if (n_steps >= kMaxTemperatureGrid)
    throw std::invalid_argument("temperature_grid: more than kMaxTemperatureGrid values");
  std::vector<double> grid;
  for (int i = 0; i <= static_cast<int>(n_steps); ++i) grid.push_back(1.0 - step * i);
  if (std::abs(grid.back() - lowest) <= tolerance)
    grid.back() = lowest;
  else
    grid.push_back(lowest);
  if (grid.size() > static_cast<size_t>(kMaxTemperatureGrid))
    throw std::invalid_argument("temperature_grid: more than kMaxTemperatureGrid values");
  return grid;
}

std::string grid_bound(const std::vector<double>& grid, double tau) {
  if (grid.empty()) return "";
  if (tau == grid.back()) return "low";
  if (tau == grid.front()) return "high";
  return "";
}

double temperature_log_rule(double L_train, double L_test) {
  if (!(L_train > 1) || !(L_test > 1)) return NAN;
  return std::log(L_train) / std::log(L_test);
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

namespace {

// A root of a τ² − b τ + c = 0 by one branch of the quadratic formula, (b ± √(b² − 4ac)) / 2a
// (sign +1: the larger root when a > 0); the linear root when a = 0; NaN when none is real.
double root(double a, double b, double c, int sign) {
  if (a == 0) return b != 0 ? c / b : NAN;  // linear
  const double disc = b * b - 4 * a * c;
  if (disc < 0) return NAN;
  return (b + sign * std::sqrt(disc)) / (2 * a);
}

}  // namespace

double temperature_pmax_closed_form(double p_max_train, double L_train, double L_test,
                                    double sigma_train, double sigma_test) {
  const double logP = std::log(p_max_train);
  const double B = std::log(L_train) + logP + sigma_train * sigma_train / 2;
  const double A = std::log(L_test) + logP, C = sigma_test * sigma_test / 2;
  // The branch that is 1 at the training length itself (A_tr τ² − B τ + C_tr = (τ − 1)(A_tr τ −
  // C_tr)): + when 1 is the larger root there.
  const double A_tr = std::log(L_train) + logP, C_tr = sigma_train * sigma_train / 2;
  const int sign = A_tr > 0 && C_tr / A_tr > 1 ? -1 : +1;
  const double tau = root(A, B, C, sign);
  return tau > 0 ? tau : NAN;
}

double temperature_entropy_closed_form(double L_train, double L_test, double sigma_train,
                                       double sigma_test) {
  const double radicand = sigma_train * sigma_train + 2 * std::log(L_test / L_train);
  return radicand > 0 ? sigma_test / std::sqrt(radicand) : NAN;
}

}  // namespace lenlab
