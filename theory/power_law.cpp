// Power-law fits of error curves, least squares in log space.
#include "theory/power_law.hpp"

#include <algorithm>
#include <stdexcept>

#include "theory/golden_section.hpp"

namespace lenlab {
namespace {

struct Point {
  double l, log_err;
};

// Linear least squares of log_err on log(l - a); returns c, p and the mean squared residual.
PowerLawFit fit_with_offset(const std::vector<Point>& points, double a) {
  PowerLawFit fit;
  double n = 0, sx = 0, sy = 0;
  for (const Point& pt : points) {
    if (pt.l <= a) continue;
    n += 1, sx += std::log(pt.l - a), sy += pt.log_err;
  }
  if (n < 2) return fit;
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const Point& pt : points) {
    if (pt.l <= a) continue;
    const double dx = std::log(pt.l - a) - mx;
    sxx += dx * dx, sxy += dx * (pt.log_err - my);
  }
  if (sxx <= 0) return fit;  // all usable l equal: no slope
  fit.p = sxy / sxx;
  fit.c = std::exp(my - fit.p * mx);
  fit.a = a;
  fit.n_points = static_cast<int>(n);
  double ss = 0;
  for (const Point& pt : points) {
    if (pt.l <= a) continue;
    const double r = pt.log_err - (my + fit.p * (std::log(pt.l - a) - mx));
    ss += r * r;
  }
  fit.rms_log_residual = std::sqrt(ss / n);
  return fit;
}

}  // namespace

PowerLawFit fit_power_law(const std::vector<double>& l, const std::vector<double>& err,
                          std::optional<double> fixed_a) {
  if (l.size() != err.size())
    throw std::invalid_argument("fit_power_law: l and err differ in length");
  std::vector<Point> points;
  for (size_t i = 0; i < l.size(); ++i) {
    if (std::isfinite(err[i]) && err[i] > 0 && std::isfinite(l[i]))
      points.push_back({l[i], std::log(err[i])});
  }
  if (fixed_a) return fit_with_offset(points, *fixed_a);
  if (points.size() < 3) return {};

  double l_min = points[0].l, l_max = points[0].l;
  for (const Point& pt : points) l_min = std::min(l_min, pt.l), l_max = std::max(l_max, pt.l);
  const double s = std::max(1.0, l_max - l_min);
  // Profile over u = log δ, δ = l_min - a > 0.
  const auto residual = [&](double u) {
    const PowerLawFit f = fit_with_offset(points, l_min - std::exp(u));
    return f.ok() ? f.rms_log_residual : std::numeric_limits<double>::infinity();
  };
  const double u_lo = std::log(1e-6 * s), u_hi = std::log(1e3 * s);
  constexpr int kGrid = 400;
  const double du = (u_hi - u_lo) / (kGrid - 1);
  int best = 0;
  double best_r = residual(u_lo);
  for (int i = 1; i < kGrid; ++i) {
    const double r = residual(u_lo + i * du);
    if (r < best_r) best_r = r, best = i;
  }
  // Refine on the neighbouring grid intervals; keep the grid point if refining does not help.
  const double lo = u_lo + std::max(best - 1, 0) * du;
  const double hi = u_lo + std::min(best + 1, kGrid - 1) * du;
  double u = golden_section_minimum(residual, lo, hi);
  if (!(residual(u) < best_r)) u = u_lo + best * du;
  PowerLawFit fit = fit_with_offset(points, l_min - std::exp(u));
  fit.a_fitted = true;
  return fit;
}

PowerLawFit fit_error_growth(const std::string& task, int l_train, const std::vector<int>& lengths,
                             const std::vector<double>& mse) {
  std::vector<double> l, err;
  for (size_t i = 0; i < lengths.size(); ++i)
    if (lengths[i] > l_train) {
      l.push_back(lengths[i]);
      err.push_back(mse[i]);
    }
  const bool grows = task == "length" || task == "sum";
  return fit_power_law(l, err, grows ? std::nullopt : std::optional<double>(l_train));
}

}  // namespace lenlab
