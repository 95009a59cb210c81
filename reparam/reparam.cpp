// Reparam construction and evaluation; the domain check and bracket live in domain_check.cpp.
#include "reparam/reparam.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

// What every "bad expression" message ends with, so users learn the rules where they fail.
std::string expression_rules() {
  return fmt::format(
      "a reparam is a built-in ({}) or an expression in the variable x with numbers, "
      "+ - * / ^, parentheses and functions such as sqrt, exp, log (natural), log10 and abs, "
      "e.g. 'x^-0.5', '1/x' or 'log(x+1)'",
      join_choices(Reparam::builtin_names()));
}

}  // namespace

std::vector<std::string> Reparam::builtin_names() {
  return {"identity", "sqrt", "log", "invsqrt"};
}

Reparam Reparam::make(const std::string& spec, const std::string& inverse_spec, double shift) {
  if (!std::isfinite(shift)) {
    throw UsageError(fmt::format("reparam shift must be finite (got {})", shift));
  }
  Reparam r;
  r.spec_ = spec;
  r.inverse_spec_ = inverse_spec;
  r.shift_ = shift;
  constexpr std::array<Builtin, 4> kBuiltins = {Builtin::kIdentity, Builtin::kSqrt, Builtin::kLog,
                                                Builtin::kInvSqrt};
  const std::vector<std::string> names = builtin_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (spec == names[i]) r.builtin_ = kBuiltins[i];
  }
  if (spec.rfind(kCustomReparamPrefix, 0) == 0) {
    const std::string name = spec.substr(std::string(kCustomReparamPrefix).size());
    r.custom_ = find_custom_reparam(name);
    if (!r.custom_)
      throw UsageError(fmt::format(
          "reparam '{}' is a Python function, and none named '{}' is registered in this process: "
          "a run trained with one is evaluated from Python, lenlab.load(run_dir, reparam=(f, "
          "f_inv)) with the same function",
          spec, name));
    if (!inverse_spec.empty())
      throw UsageError(fmt::format(
          "--reparam-inverse '{}' is for expressions: reparam '{}' is a Python function; give its "
          "inverse as the second element of reparam=(f, f_inv)",
          inverse_spec, spec));
    return r;
  }
  if (r.is_builtin()) {
    if (!inverse_spec.empty()) {
      throw UsageError(fmt::format(
          "--reparam-inverse '{}' is only for expressions: --reparam '{}' is a built-in with an "
          "exact inverse; drop --reparam-inverse",
          inverse_spec, spec));
    }
    return r;
  }
  if (spec.empty()) throw UsageError(fmt::format("empty reparam; {}", expression_rules()));
  try {
    r.expr_.emplace(spec);
  } catch (const UsageError& e) {
    throw UsageError(
        fmt::format("reparam '{}' is neither a built-in nor a valid expression ({}); {}", spec,
                    e.what(), expression_rules()));
  }
  if (!inverse_spec.empty()) {
    try {
      r.inverse_expr_.emplace(inverse_spec);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format(
          "inverse expression '{}' of reparam '{}' is not a valid expression in x ({}); {}",
          inverse_spec, spec, e.what(), expression_rules()));
    }
  }
  return r;
}

double Reparam::f(double u) const {
  switch (builtin_) {
    case Builtin::kIdentity:
      return u;
    case Builtin::kSqrt:
      return std::sqrt(u);
    case Builtin::kLog:
      return std::log(u);
    case Builtin::kInvSqrt:
      return 1.0 / std::sqrt(u);
    case Builtin::kNone:
      break;
  }
  if (custom_) {
    double out = 0;
    custom_->f(&u, &out, 1);
    return out;
  }
  return (*expr_)(u);
}

double Reparam::forward(double y) const {
  return f(y + shift_);
}

void Reparam::forward_many(const double* ys, double* out, size_t n) const {
  if (!custom_) {
    for (size_t i = 0; i < n; ++i) out[i] = forward(ys[i]);
    return;
  }
  std::vector<double> u(ys, ys + n);
  for (double& x : u) x += shift_;
  custom_->f(u.data(), out, n);
}

void Reparam::inverse_many(const double* zs, double* out, unsigned char* clamped, size_t n) const {
  if (custom_ && custom_->inverse) {
    custom_->inverse(zs, out, n);
    for (size_t i = 0; i < n; ++i) {
      out[i] -= shift_;
      clamped[i] = 0;
    }
    return;
  }
  if (custom_ && !custom_->inverse) {
    numerical_inverse_many(zs, out, clamped, n);
    for (size_t i = 0; i < n; ++i) out[i] -= shift_;
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    bool c = false;
    out[i] = inverse(zs[i], &c);
    clamped[i] = c;
  }
}

double Reparam::given_inverse(double z) const {
  if (inverse_expr_) return (*inverse_expr_)(z);
  double out = 0;
  custom_->inverse(&z, &out, 1);
  return out;
}

double Reparam::inverse(double z, bool* clamped) const {
  if (clamped) *clamped = false;
  double u = 0.0;
  switch (builtin_) {
    case Builtin::kIdentity:
      u = z;
      break;
    case Builtin::kSqrt:
      u = z * z;
      break;
    case Builtin::kLog:
      u = std::exp(z);
      break;
    case Builtin::kInvSqrt:
      u = 1.0 / (z * z);
      break;
    case Builtin::kNone:
      u = has_given_inverse() ? given_inverse(z) : numerical_inverse(z, clamped);
      break;
  }
  return u - shift_;
}

double Reparam::numerical_inverse(double z, bool* clamped) const {
  if (!bracket_) {
    throw std::logic_error(fmt::format(
        "Reparam::inverse of '{}' needs check_domain first (the numerical inverse brackets the "
        "checked target range)",
        spec_));
  }
  const Bracket& b = *bracket_;
  const bool increasing = b.f_hi > b.f_lo;
  const double f_min = increasing ? b.f_lo : b.f_hi;
  const double f_max = increasing ? b.f_hi : b.f_lo;
  const double u_at_f_min = increasing ? b.lo : b.hi;
  const double u_at_f_max = increasing ? b.hi : b.lo;
  if (std::isnan(z) || z < f_min || z > f_max) {
    if (clamped) *clamped = true;
    if (std::isnan(z)) return b.lo;
    return z < f_min ? u_at_f_min : u_at_f_max;
  }
  if (z == b.f_lo) return b.lo;
  if (z == b.f_hi) return b.hi;
  // Invariant: s * (f(a) - z) <= 0 <= s * (f(c) - z), with s the direction of f.
  const double s = increasing ? 1.0 : -1.0;
  double a = b.lo;
  double c = b.hi;
  // Absolute floor for targets at or near u = 0, where a relative tolerance cannot be met.
  const double floor = 1e-14 * std::max({std::abs(b.range_lo), std::abs(b.range_hi), 1e-300});
  for (int iter = 0; iter < 4096; ++iter) {
    if (c - a <= 1e-13 * std::max(std::abs(a), std::abs(c)) || c - a <= floor) break;
    const double m = a + 0.5 * (c - a);
    if (m <= a || m >= c) break;  // no double strictly between a and c
    const double g = s * (f(m) - z);
    if (!std::isfinite(g)) break;  // a non-finite point the bracket sampling missed: stop here
    if (g <= 0.0) {
      a = m;
    } else {
      c = m;
    }
  }
  return a + 0.5 * (c - a);
}

void Reparam::numerical_inverse_many(const double* zs, double* u, unsigned char* clamped,
                                     size_t n) const {
  // Each z's bisection as in numerical_inverse, run side by side: the z's still bracketing are
  // `live`, and one call of f evaluates all their midpoints. The z's that numerical_inverse
  // settles without a bisection go through it directly.
  std::vector<size_t> live, bisected;
  std::vector<double> a(n), c(n);
  for (size_t i = 0; i < n; ++i) {
    bool clamp = false;
    const Bracket* b = bracket_ ? &*bracket_ : nullptr;
    if (!b || std::isnan(zs[i]) || zs[i] == b->f_lo || zs[i] == b->f_hi ||
        zs[i] < std::min(b->f_lo, b->f_hi) || zs[i] > std::max(b->f_lo, b->f_hi)) {
      u[i] = numerical_inverse(zs[i], &clamp);  // throws without a bracket
      clamped[i] = clamp;
      continue;
    }
    clamped[i] = 0;
    a[i] = b->lo;
    c[i] = b->hi;
    live.push_back(i);
  }
  if (live.empty()) return;
  bisected = live;
  const Bracket& b = *bracket_;
  const double s = b.f_hi > b.f_lo ? 1.0 : -1.0;
  const double floor = 1e-14 * std::max({std::abs(b.range_lo), std::abs(b.range_hi), 1e-300});
  std::vector<double> m, fm;
  std::vector<size_t> next;
  for (int iter = 0; iter < 4096 && !live.empty(); ++iter) {
    m.clear();
    next.clear();
    for (const size_t i : live) {
      if (c[i] - a[i] <= 1e-13 * std::max(std::abs(a[i]), std::abs(c[i])) || c[i] - a[i] <= floor)
        continue;
      const double mid = a[i] + 0.5 * (c[i] - a[i]);
      if (mid <= a[i] || mid >= c[i]) continue;
      next.push_back(i);
      m.push_back(mid);
    }
    fm.resize(m.size());
    if (!m.empty()) custom_->f(m.data(), fm.data(), m.size());
    live.clear();
    for (size_t k = 0; k < next.size(); ++k) {
      const size_t i = next[k];
      const double g = s * (fm[k] - zs[i]);
      if (!std::isfinite(g)) continue;  // as numerical_inverse: stop at a non-finite point
      (g <= 0.0 ? a[i] : c[i]) = m[k];
      live.push_back(i);
    }
  }
  for (const size_t i : bisected) u[i] = a[i] + 0.5 * (c[i] - a[i]);
}

std::string Reparam::f_of(double y) const {
  if (shift_ == 0.0) return fmt::format("f({:.6g})", y);
  return fmt::format("f({:.6g} {} {:.6g})", y, shift_ < 0.0 ? '-' : '+', std::abs(shift_));
}

std::string Reparam::show(double v) {
  // fmt prints the sign bit of a NaN ("-nan"), which means nothing to a user.
  return std::isnan(v) ? "nan" : fmt::format("{:.6g}", v);
}

}  // namespace lenlab
