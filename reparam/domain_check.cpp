// Reparam::check_domain: is f usable (finite, strictly monotone) on a task's targets, and the
// bracket the numerical inverse searches.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "reparam/reparam.hpp"

namespace lenlab {
namespace {

constexpr int kGridIntervals = 1024;  // uniform grid over the target range
constexpr int kSegmentPoints = 16;    // points checked along each widening step
constexpr double kMaxWiden = 1e6;     // widen each side by at most this many range widths
constexpr double kMinStep = 1e-9;     // stop widening once steps fall below this many widths
constexpr int kMaxWidenSteps = 400;   // hard cap on widening attempts per side
constexpr double kInverseRelTol = 1e-6;
constexpr double kInverseAbsTol = 1e-12;

}  // namespace

void Reparam::check_domain(const std::vector<double>& targets, const std::string& task) {
  if (targets.empty()) throw std::invalid_argument("Reparam::check_domain: no targets");
  for (const double y : targets) {
    if (!std::isfinite(y)) throw std::invalid_argument("Reparam::check_domain: non-finite target");
  }
  std::vector<double> ys = targets;
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  const double y_min = ys.front();
  const double y_max = ys.back();
  const std::string range = fmt::format("y in [{:.6g}, {:.6g}]", y_min, y_max);
  const std::string fix_shift = "or move the targets with --reparam-shift";

  // 1. Finite at every target.
  for (const double y : ys) {
    const double v = forward(y);
    if (std::isfinite(v)) continue;
    std::string fix;
    // Shifting the smallest target to 1 fixes log, invsqrt and the like at y = 0.
    const double suggested = 1.0 - y_min;
    if (y == y_min && suggested != shift_ && std::isfinite(f(1.0))) {
      fix = fmt::format("train on f(y + c) with --reparam-shift, e.g. --reparam-shift {:.6g}",
                        suggested);
    } else {
      fix = fmt::format("choose a reparam that is finite on {}, {}", range, fix_shift);
    }
    throw UsageError(
        fmt::format("reparam '{}' is not finite at target y = {:.6g} of task '{}' "
                    "({} = {}); {}",
                    spec_, y, task, f_of(y), show(v), fix));
  }

  // 2. Finite and strictly monotone on a dense set: targets, midpoints, uniform grid. A single
  // target is checked on a small interval around it so that f's direction is defined.
  double lo = y_min;
  double hi = y_max;
  if (lo == hi) {
    const double d = 1e-3 * std::max(std::abs(lo), 1.0);
    lo -= d;
    hi += d;
  }
  std::vector<double> points = ys;
  for (size_t i = 1; i < ys.size(); ++i) points.push_back(ys[i - 1] + 0.5 * (ys[i] - ys[i - 1]));
  for (int i = 0; i <= kGridIntervals; ++i) points.push_back(lo + (hi - lo) * i / kGridIntervals);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<double> values(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    values[i] = forward(points[i]);
    if (!std::isfinite(values[i])) {
      throw UsageError(fmt::format(
          "reparam '{}' is not finite at y = {:.6g}, between the targets of task '{}' ({}; "
          "{} = {}); it must be finite and strictly monotone on the whole range: choose another "
          "reparam, {}",
          spec_, points[i], task, range, f_of(points[i]), show(values[i]), fix_shift));
    }
  }
  const bool increasing = values.back() > values.front();
  for (size_t i = 1; i < points.size(); ++i) {
    const bool ok = increasing ? values[i] > values[i - 1] : values[i] < values[i - 1];
    if (ok) continue;
    throw UsageError(fmt::format(
        "reparam '{}' is not strictly monotone on the targets of task '{}' ({}): {} = {} "
        "{} {} = {}, so its predictions could not be inverted; choose a strictly monotone "
        "reparam there, {}",
        spec_, task, range, f_of(points[i - 1]), show(values[i - 1]),
        increasing ? ">=" : "<=", f_of(points[i]), show(values[i]), fix_shift));
  }

  // 3. A given inverse must invert f at every target.
  if (inverse_expr_) {
    for (const double y : ys) {
      const double u = y + shift_;
      const double back = (*inverse_expr_)(f(u));
      if (std::abs(back - u) <= kInverseRelTol * std::abs(u) + kInverseAbsTol) continue;
      throw UsageError(fmt::format(
          "inverse expression '{}' does not invert reparam '{}' at target y = {:.6g} of task '{}' "
          "(f^-1({}) = {}, expected {:.10g}); fix it, or leave it out to invert numerically",
          inverse_spec_, spec_, y, task, f_of(y), show(back), u));
    }
  }

  // 4. The numerical inverse's bracket: the checked range, widened outward on each side while f
  // stays finite and strictly monotone (so predictions beyond the training targets, e.g. at
  // longer lengths, can still be inverted).
  bracket_.reset();
  if (!uses_numerical_inverse()) return;
  const double u_lo = lo + shift_;
  const double u_hi = hi + shift_;
  const double width = u_hi - u_lo;
  auto widen = [&](double start, double dir) {
    // Moving u in direction dir, f must move in direction sign.
    const double sign = (increasing ? 1.0 : -1.0) * dir;
    const double max_extent = kMaxWiden * width;
    double x = start;
    double fx = f(x);
    double step = width;
    double extent = 0.0;
    for (int it = 0; it < kMaxWidenSteps && step >= kMinStep * width && extent < max_extent; ++it) {
      step = std::min(step, max_extent - extent);
      double prev = fx;
      bool ok = true;
      for (int k = 1; k <= kSegmentPoints && ok; ++k) {
        const double p = k == kSegmentPoints ? x + dir * step : x + dir * step * k / kSegmentPoints;
        const double v = f(p);
        ok = std::isfinite(v) && sign * (v - prev) > 0.0;
        prev = v;
      }
      if (ok) {
        x += dir * step;
        fx = prev;
        extent += step;
        step *= 2.0;
      } else {
        step *= 0.5;
      }
    }
    return x;
  };
  Bracket b;
  b.lo = widen(u_lo, -1.0);
  b.hi = widen(u_hi, +1.0);
  b.f_lo = f(b.lo);
  b.f_hi = f(b.hi);
  b.range_lo = u_lo;
  b.range_hi = u_hi;
  bracket_ = b;
}

}  // namespace lenlab
