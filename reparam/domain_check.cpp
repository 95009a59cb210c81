// Reparam::check_domain: is f usable (finite, strictly monotone) on a task's targets, and the
// bracket the numerical inverse searches.
#include <algorithm>
#include <cmath>
#include <limits>
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
// Targets closer than this fraction of the targets' range may share one float value of f: the
// mean task's neighbouring fractions k/l do under sqrt or a shift once l_test reaches about 2000,
// and merging them costs at most (1e-6 of the range)^2 in squared error.
constexpr double kMergeRelTol = 1e-6;
constexpr double kFloatMin = std::numeric_limits<float>::min();  // smallest normal float
constexpr double kFloatMax = std::numeric_limits<float>::max();

// A tolerance for messages: 1e-06 as 1e-6.
std::string show_tol(double t) {
  std::string s = fmt::format("{:g}", t);
  const size_t e = s.find("e-0");
  if (e != std::string::npos) s.erase(e + 2, 1);
  return s;
}

// What the float check allows, for its messages.
std::string float_rules(const std::string& range) {
  return fmt::format(
      "the model predicts in float (32-bit), so at every target ({}) f(y + c) must be 0 or of "
      "magnitude {:.6g} to {:.6g} (a normal float), and distinct targets must round to distinct "
      "floats (targets within {} of the range's width of each other excepted)",
      range, kFloatMin, kFloatMax, show_tol(kMergeRelTol));
}

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

  // 3. Representable in float, the precision the model predicts in.
  check_float_precision(ys, task, range);

  // 4. A given inverse must invert f wherever the model's outputs fall: at and between the targets.
  if (has_given_inverse()) check_inverse(ys, points, values, task, range);

  // 5. The numerical inverse's bracket: the checked range, widened outward on each side while f
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

void Reparam::check_float_precision(const std::vector<double>& ys, const std::string& task,
                                    const std::string& range) const {
  // Only the targets: by monotonicity every value between them lies between the two end targets'
  // values, so it cannot overflow, and a value near 0 between them is where f crosses 0, which
  // float outputs near 0 resolve; grid points closer together than the targets need not be
  // distinct, the model never has to tell them apart.
  std::vector<float> rounded(ys.size());
  for (size_t i = 0; i < ys.size(); ++i) {
    const double v = forward(ys[i]);
    const bool over = std::abs(v) > kFloatMax;  // checked first: converting it would be UB
    if (!over) rounded[i] = static_cast<float>(v);
    if (!over && (v == 0.0 || std::isnormal(rounded[i]))) continue;
    throw UsageError(fmt::format(
        "--reparam '{}' is too {} for float at target y = {:.10g} of task '{}' ({} = {}, {}): {}; "
        "scale the reparam {}",
        spec_, over ? "large" : "small", ys[i], task, f_of(ys[i]), v,
        over ? fmt::format("above the largest float, {:.6g}", kFloatMax)
             : fmt::format("nonzero but below the smallest normal float, {:.6g}", kFloatMin),
        float_rules(range), over ? "down" : "up"));
  }
  const double merge_tol = kMergeRelTol * (ys.back() - ys.front());
  for (size_t a = 0; a < ys.size();) {
    size_t b = a;  // targets a..b round to one float; they are contiguous since f is monotone
    while (b + 1 < ys.size() && rounded[b + 1] == rounded[a]) ++b;
    if (ys[b] - ys[a] > merge_tol) {
      throw UsageError(fmt::format(
          "--reparam '{}' rounds targets y = {:.10g} to {:.10g} of task '{}' to the same float, "
          "{} ({} = {}, {} = {}), so the model could not tell them apart: {}; spread its values "
          "(remove a large constant part, or scale it up)",
          spec_, ys[a], ys[b], task, rounded[a], f_of(ys[a]), forward(ys[a]), f_of(ys[b]),
          forward(ys[b]), float_rules(range)));
    }
    a = b + 1;
  }
}

void Reparam::check_inverse(const std::vector<double>& ys, const std::vector<double>& points,
                            const std::vector<double>& values, const std::string& task,
                            const std::string& range) const {
  auto check = [&](double y, double fu, bool is_target) {
    const double u = y + shift_;
    const double back = given_inverse(fu);
    if (std::abs(back - u) <= kInverseRelTol * std::abs(u) + kInverseAbsTol) return;
    std::string where;
    if (is_target) {
      where = fmt::format("target y = {:.10g} of task '{}'", y, task);
    } else if (ys.size() == 1) {
      where = fmt::format("y = {:.10g}, next to the only target of task '{}'", y, task);
    } else {
      where = fmt::format("y = {:.10g}, between the targets of task '{}' ({})", y, task, range);
    }
    throw UsageError(fmt::format(
        "--reparam-inverse '{}' does not invert --reparam '{}' at {} = {:.10g} ({}): f(u) = "
        "{:.10g} but f^-1(f(u)) = {}; it must give back u to within {} |u| + {} at every "
        "target, midpoint between targets and point of a {}-interval grid over their range, where "
        "the model's outputs fall: fix it, or leave it out to invert numerically",
        custom_ ? "the Python inverse" : inverse_spec_, spec_, shift_ == 0.0 ? "u" : "u = y + c", u,
        where, fu, std::isnan(back) ? "nan" : fmt::format("{:.10g}", back),
        show_tol(kInverseRelTol), show_tol(kInverseAbsTol), kGridIntervals));
  };
  // The targets first: a failure there is the plainest to read.
  for (const double y : ys) check(y, forward(y), true);
  for (size_t i = 0; i < points.size(); ++i) {
    if (!std::binary_search(ys.begin(), ys.end(), points[i])) check(points[i], values[i], false);
  }
}

}  // namespace lenlab
