#pragma once
// Output reparameterization ("OutRep"): the model trains on z = f(y + c) instead of the target y
// and its predictions are mapped back with y = f^-1(z) - c at evaluation.
//
// f is a built-in (exact closed forms both ways, applied as in the paper, no clamping):
//   identity: f(u) = u          f^-1(z) = z
//   sqrt:     f(u) = sqrt(u)    f^-1(z) = z^2
//   log:      f(u) = ln(u)      f^-1(z) = exp(z)
//   invsqrt:  f(u) = 1/sqrt(u)  f^-1(z) = 1/z^2
// or a user expression in x evaluated with muparser ("x^-0.5", "1/x", "log(x+1)"), or a function
// registered from Python, named "python:NAME" (reparam/custom_reparam.hpp). Its inverse is a user
// expression too (inverse_spec), the registered function's own, or else found numerically by
// bisection on a bracket recorded by check_domain (see there).
//
// The shift c is the documented workaround for targets equal to 0 under log or invsqrt.
//
// Thread safety: forward/inverse evaluate muparser, which mutates per-instance state, so one
// instance must be used by one thread at a time. Copies re-parse their expressions and are fully
// independent (give each thread its own copy).
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "reparam/custom_reparam.hpp"
#include "reparam/expression.hpp"

namespace lenlab {

class Reparam {
 public:
  // spec: a built-in name or an expression in x; inverse_spec: "" or an expression in x giving
  // f^-1 (only for user expressions); shift: the c above, finite. Throws UsageError on a spec that
  // is neither a built-in nor a valid expression (the message lists the built-ins and the
  // expression rules), on a bad inverse expression, on an inverse given for a built-in, and on a
  // non-finite shift.
  static Reparam make(const std::string& spec, const std::string& inverse_spec = "",
                      double shift = 0.0);

  // f(y + c); NaN or +-inf where f is not finite there.
  double forward(double y) const;
  // out[i] = forward(ys[i]) for i < n: one call of a registered function for the whole array.
  void forward_many(const double* ys, double* out, size_t n) const;

  // f^-1(z) - c. Built-ins and a given inverse expression: closed form, *clamped = false.
  // Numerical inverse (user expression without inverse_spec): solves f(u) = z by bisection on the
  // bracket recorded by check_domain to ~1e-13 relative; when z lies outside f's values on the
  // bracket (or is NaN), returns the bracket end nearest in f-value (the lower end for NaN) and
  // sets *clamped = true, so it never returns NaN. Throws std::logic_error when a numerical
  // inverse is needed and check_domain has not run. `clamped`, when not null, is always written.
  double inverse(double z, bool* clamped = nullptr) const;
  // out[i] = inverse(zs[i], &c), clamped[i] = c, for i < n: one call of a registered function's
  // inverse for the whole array.
  void inverse_many(const double* zs, double* out, unsigned char* clamped, size_t n) const;

  // Checks that f can be trained on and inverted over every target the run will meet, and throws
  // a one-line UsageError naming the reparam, the offending y and value, the task and the fix
  // otherwise. With u = y + c, and "the dense set" meaning the targets, the midpoints between
  // consecutive targets and a 1024-interval uniform grid over [min, max] of the targets (a single
  // target y: the grid over [y - d, y + d], d = 1e-3 max(|y|, 1)), it requires, in this order:
  //  1. f(u) finite at every target (at the smallest target the message suggests the
  //     --reparam-shift that moves it to u = 1 when f is finite there);
  //  2. f(u) finite on the dense set and strictly monotone along it, in one direction;
  //  3. float precision, since the model predicts in float (32-bit): at every target, f(u) is 0
  //     exactly or its magnitude lies in [FLT_MIN, FLT_MAX] (rounded to float it is a normal
  //     number: no underflow to a subnormal or 0, no overflow); and targets rounding to one float
  //     span at most 1e-6 of (max - min) of the targets (distinct targets stay distinct in float,
  //     except the mean task's neighbouring fractions at l_test in the thousands). Only targets:
  //     by 2. every value between them lies within the end targets' values;
  //  4. with an inverse expression: |f^-1(f(u)) - u| <= 1e-6 |u| + 1e-12 on the whole dense set
  //     (the model's outputs fall between and around the values at the targets), the targets
  //     checked first. Built-ins invert exactly; the numerical inverse inverts f by construction.
  //
  // For the numerical inverse it then records the bracket: [min, max] widened outward on each side
  // by steps that double from the range's width (halving after a failure, down to 1e-9 of it),
  // up to 1e6 times the width, accepting a step only while f stays finite and strictly monotone
  // in the same direction on 16 points along it (so the bracket never crosses a pole or the edge
  // of f's domain). Call it with every target the model will be trained on or evaluated at;
  // calling it again replaces the recorded range. Not const because of that recording; `targets`
  // must be non-empty and finite (std::invalid_argument otherwise).
  void check_domain(const std::vector<double>& targets, const std::string& task);

  const std::string& spec() const { return spec_; }
  const std::string& inverse_spec() const { return inverse_spec_; }
  double shift() const { return shift_; }
  bool is_builtin() const { return builtin_ != Builtin::kNone; }
  // True when inverse() bisects (user expression without inverse_spec).
  bool uses_numerical_inverse() const { return !is_builtin() && !has_given_inverse(); }
  // A function registered from Python (spec "python:NAME").
  bool is_custom() const { return custom_ != nullptr; }

  // The numerical inverse's bracket, in u = y + c space; set by check_domain when
  // uses_numerical_inverse().
  struct Bracket {
    double lo, hi;              // the bracket, u = y + c space
    double f_lo, f_hi;          // f(lo), f(hi)
    double range_lo, range_hi;  // the checked target range it was widened from, u space
  };
  const std::optional<Bracket>& bracket() const { return bracket_; }

  static std::vector<std::string> builtin_names();

 private:
  enum class Builtin { kNone, kIdentity, kSqrt, kLog, kInvSqrt };

  Reparam() = default;
  double f(double u) const;  // f without the shift
  bool has_given_inverse() const { return inverse_expr_ || (custom_ && custom_->inverse); }
  double given_inverse(double z) const;  // f⁻¹(z) of the expression or the registered function
  double numerical_inverse(double z, bool* clamped) const;  // returns u, not y
  // numerical_inverse of every zs[i] into u[i], the same steps and results, but each bisection
  // step calls a registered f once for all the zs still bracketing (~45 calls, not ~45 per z).
  void numerical_inverse_many(const double* zs, double* u, unsigned char* clamped, size_t n) const;
  // Human-readable "f(y)" or "f(y + c)" for messages.
  std::string f_of(double y) const;
  static std::string show(double v);  // a value for messages, 6 significant digits
  // Steps 3 and 4 of check_domain (domain_check.cpp): ys sorted and distinct; points and values
  // the dense set and f there; range the "y in [..]" text for messages.
  void check_float_precision(const std::vector<double>& ys, const std::string& task,
                             const std::string& range) const;
  void check_inverse(const std::vector<double>& ys, const std::vector<double>& points,
                     const std::vector<double>& values, const std::string& task,
                     const std::string& range) const;

  std::string spec_;
  std::string inverse_spec_;
  double shift_ = 0.0;
  Builtin builtin_ = Builtin::kNone;
  std::optional<Expression> expr_;               // user f
  std::optional<Expression> inverse_expr_;       // user f^-1, when given
  std::optional<Bracket> bracket_;               // set by check_domain for the numerical inverse
  std::shared_ptr<const CustomReparam> custom_;  // "python:NAME"
};

}  // namespace lenlab
