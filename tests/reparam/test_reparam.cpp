// Tests for reparam/: built-ins, user expressions, numerical inverse, domain checks, copies.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "reparam/custom_reparam.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab {
namespace {

using lenlab::test::contains;
using lenlab::test::usage_message;

// |a - b| <= rel |b| + abs.
bool close(double a, double b, double rel, double abs = 0.0) {
  return std::abs(a - b) <= rel * std::abs(b) + abs;
}

// The three target shapes: lengths 1..40, sums 0..40, means k/l for l <= 16.
std::vector<double> length_targets() {
  return task_target_values(TaskKind::kLength, 1, 40);
}
std::vector<double> sum_targets() {
  return task_target_values(TaskKind::kSum, 1, 40);
}
std::vector<double> mean_targets() {
  return task_target_values(TaskKind::kMean, 1, 16);
}

// Checks inverse(forward(y)) == y on every target, without clamping.
void check_round_trip(const Reparam& r, const std::vector<double>& targets, double rel) {
  for (const double y : targets) {
    CAPTURE(y);
    bool clamped = true;
    const double back = r.inverse(r.forward(y), &clamped);
    CHECK_FALSE(clamped);
    CHECK(close(back, y, rel, 1e-12));
  }
}

}  // namespace

TEST_CASE("built-ins: names, closed forms, round trips") {
  CHECK(Reparam::builtin_names() == std::vector<std::string>{"identity", "sqrt", "log", "invsqrt"});
  const Reparam id = Reparam::make("identity");
  const Reparam sq = Reparam::make("sqrt");
  const Reparam lg = Reparam::make("log");
  const Reparam is = Reparam::make("invsqrt");
  for (const Reparam* r : {&id, &sq, &lg, &is}) CHECK(r->is_builtin());
  CHECK(id.forward(3.5) == 3.5);
  CHECK(sq.forward(4.0) == 2.0);
  CHECK(lg.forward(std::exp(2.0)) == doctest::Approx(2.0));
  CHECK(is.forward(4.0) == 0.5);
  CHECK(is.inverse(0.5) == 4.0);
  CHECK(sq.inverse(3.0) == 9.0);
  CHECK(lg.inverse(0.0) == 1.0);
  // Built-ins apply the closed form as the paper does: no clamping, no range needed.
  bool clamped = true;
  CHECK(sq.inverse(-2.0, &clamped) == 4.0);
  CHECK_FALSE(clamped);

  for (const auto& name : Reparam::builtin_names()) {
    CAPTURE(name);
    // log and invsqrt need a shift on targets that include 0 (sum, mean).
    const bool needs_shift = name == "log" || name == "invsqrt";
    Reparam length = Reparam::make(name);
    length.check_domain(length_targets(), "length");
    check_round_trip(length, length_targets(), 1e-12);
    Reparam sum = Reparam::make(name, "", needs_shift ? 1.0 : 0.0);
    sum.check_domain(sum_targets(), "sum");
    check_round_trip(sum, sum_targets(), 1e-12);
    Reparam mean = Reparam::make(name, "", needs_shift ? 0.5 : 0.0);
    mean.check_domain(mean_targets(), "mean");
    check_round_trip(mean, mean_targets(), 1e-12);
  }
}

TEST_CASE("user expressions agree with built-ins and closed forms") {
  const Reparam user = Reparam::make("x^-0.5");
  const Reparam builtin = Reparam::make("invsqrt");
  CHECK_FALSE(user.is_builtin());
  CHECK(user.uses_numerical_inverse());
  const Reparam recip = Reparam::make("1/x");
  const Reparam logp = Reparam::make("log(x+1)");
  for (const double y : length_targets()) {
    CAPTURE(y);
    CHECK(close(user.forward(y), builtin.forward(y), 1e-14));
    CHECK(close(recip.forward(y), 1.0 / y, 1e-15));
    CHECK(close(logp.forward(y), std::log(y + 1.0), 1e-15));  // muparser's log is natural
  }
  const Reparam shifted = Reparam::make("x^-0.5", "", 2.0);
  CHECK(close(shifted.forward(2.0), 0.5, 1e-15));  // f(y + c)
}

TEST_CASE("numerical inverse: round trips to 1e-9 and extrapolates beyond the targets") {
  Reparam invsqrt = Reparam::make("x^-0.5");
  invsqrt.check_domain(length_targets(), "length");
  check_round_trip(invsqrt, length_targets(), 1e-9);
  // Predictions at longer lengths than trained on must still invert.
  for (const double y : {41.0, 100.0, 1000.0, 1e5}) {
    CAPTURE(y);
    bool clamped = true;
    CHECK(close(invsqrt.inverse(invsqrt.forward(y), &clamped), y, 1e-9));
    CHECK_FALSE(clamped);
  }
  // ... and between and slightly below them (the bracket reaches toward the pole at 0).
  for (const double y : {0.5, 0.01, 1.5, 17.25}) {
    CAPTURE(y);
    CHECK(close(invsqrt.inverse(invsqrt.forward(y)), y, 1e-9));
  }
  REQUIRE(invsqrt.bracket().has_value());
  CHECK(invsqrt.bracket()->lo > 0.0);
  CHECK(invsqrt.bracket()->lo < 1e-3);
  CHECK(invsqrt.bracket()->hi >= 1e6 * 39);

  // Decreasing, increasing, targets including 0, and no closed form.
  Reparam recip = Reparam::make("1/x");
  recip.check_domain(length_targets(), "length");
  check_round_trip(recip, length_targets(), 1e-9);
  Reparam logp = Reparam::make("log(x+1)");
  logp.check_domain(mean_targets(), "mean");
  check_round_trip(logp, mean_targets(), 1e-9);
  Reparam cubic = Reparam::make("x^3 + x");
  cubic.check_domain(sum_targets(), "sum");
  check_round_trip(cubic, sum_targets(), 1e-9);
  CHECK(close(cubic.inverse(cubic.forward(-7.0)), -7.0, 1e-9));  // below the targets
}

TEST_CASE("numerical inverse needs check_domain first") {
  const Reparam r = Reparam::make("x^-0.5");
  CHECK_THROWS_AS(r.inverse(0.5), std::logic_error);
  // Built-ins and given inverses need no range.
  CHECK(Reparam::make("sqrt").inverse(2.0) == 4.0);
  CHECK_NOTHROW(Reparam::make("x^-0.5", "x^-2").inverse(0.5));
}

TEST_CASE("a given inverse expression is used and checked") {
  // Without a range a numerical inverse would throw, so a value proves the expression ran.
  const Reparam twice = Reparam::make("2*x", "x/2");
  CHECK(twice.inverse(10.0) == 5.0);
  CHECK_FALSE(twice.uses_numerical_inverse());
  Reparam r = Reparam::make("x^-0.5", "x^-2");
  CHECK(r.inverse_spec() == "x^-2");
  r.check_domain(length_targets(), "length");
  check_round_trip(r, length_targets(), 1e-12);
  CHECK(close(r.inverse(0.5), 4.0, 1e-15));
  CHECK_FALSE(r.bracket().has_value());
  // A wrong inverse is refused, naming both expressions and the target.
  Reparam wrong = Reparam::make("x^-0.5", "x^2");
  const std::string m = usage_message([&] { wrong.check_domain(length_targets(), "length"); });
  // Exact at u = 1 (f(1) = 1), wrong from u = 2 on.
  CHECK(contains(m,
                 "--reparam-inverse 'x^2' does not invert --reparam 'x^-0.5' at u = 2 (target "
                 "y = 2 of task 'length'): f(u) = 0.7071067812 but f^-1(f(u)) = 0.5"));
  // A bad inverse expression is refused at make.
  CHECK(contains(usage_message([] { Reparam::make("x^-0.5", "x^^2"); }), "inverse expression"));
  // Built-ins have exact inverses: an inverse expression for one is a mistake.
  CHECK(contains(usage_message([] { Reparam::make("log", "exp(x)"); }), "built-in"));
}

TEST_CASE("clamping: out-of-range predictions map to the nearest bracket end, never NaN") {
  Reparam r = Reparam::make("x^-0.5");  // decreasing, positive
  r.check_domain(length_targets(), "length");
  const auto& b = *r.bracket();
  bool clamped = false;
  // f > 0 everywhere: a negative prediction lies below f on the bracket, nearest f(hi).
  CHECK(r.inverse(-1.0, &clamped) == b.hi);
  CHECK(clamped);
  clamped = false;
  CHECK(r.inverse(1e12, &clamped) == b.lo);  // above f(lo): the end near the pole
  CHECK(clamped);
  clamped = false;
  const double nan_result = r.inverse(std::nan(""), &clamped);
  CHECK(clamped);
  CHECK(std::isfinite(nan_result));
  CHECK(close(r.inverse(0.5, &clamped), 4.0, 1e-12));
  CHECK_FALSE(clamped);

  // With a shift the returned value is the bracket end minus c.
  Reparam cubic = Reparam::make("x^3", "", 2.0);
  cubic.check_domain(sum_targets(), "sum");
  CHECK(cubic.inverse(1e300, &clamped) == cubic.bracket()->hi - 2.0);
  CHECK(clamped);
  CHECK(cubic.inverse(-1e300, &clamped) == cubic.bracket()->lo - 2.0);
  CHECK(clamped);
}

TEST_CASE("log and invsqrt refuse target 0 and point to --reparam-shift, a shift fixes it") {
  Reparam lg = Reparam::make("log");
  CHECK(usage_message([&] { lg.check_domain(sum_targets(), "sum"); }) ==
        "reparam 'log' is not finite at target y = 0 of task 'sum' (f(0) = -inf); train on "
        "f(y + c) with --reparam-shift, e.g. --reparam-shift 1");
  Reparam is = Reparam::make("invsqrt");
  std::string m = usage_message([&] { is.check_domain(mean_targets(), "mean"); });
  CHECK(contains(m, "reparam 'invsqrt' is not finite at target y = 0 of task 'mean'"));
  CHECK(contains(m, "f(0) = inf"));
  CHECK(contains(m, "--reparam-shift"));
  Reparam user = Reparam::make("x^-0.5");
  CHECK(contains(usage_message([&] { user.check_domain(sum_targets(), "sum"); }),
                 "--reparam-shift 1"));

  for (const std::string name : {"log", "invsqrt", "x^-0.5", "log(x)"}) {
    CAPTURE(name);
    Reparam shifted = Reparam::make(name, "", 1.0);
    CHECK(shifted.shift() == 1.0);
    CHECK_NOTHROW(shifted.check_domain(sum_targets(), "sum"));
    check_round_trip(shifted, sum_targets(), 1e-9);
    CHECK(close(shifted.inverse(shifted.forward(0.0)), 0.0, 0.0, 1e-12));
  }
  // The message shows the shift when one is set, and a shift that fixes it.
  Reparam minus = Reparam::make("log", "", -1.0);
  CHECK(usage_message([&] { minus.check_domain(length_targets(), "length"); }) ==
        "reparam 'log' is not finite at target y = 1 of task 'length' (f(1 - 1) = -inf); train on "
        "f(y + c) with --reparam-shift, e.g. --reparam-shift 0");
}

TEST_CASE("non-monotone and non-finite expressions are refused") {
  Reparam parabola = Reparam::make("(x-3)^2");
  const std::vector<double> one_to_ten = task_target_values(TaskKind::kLength, 1, 10);
  std::string m = usage_message([&] { parabola.check_domain(one_to_ten, "length"); });
  CHECK(contains(m, "reparam '(x-3)^2' is not strictly monotone on the targets of task 'length'"));
  CHECK(contains(m, "y in [1, 10]"));

  Reparam pole = Reparam::make("1/(x-5)");
  m = usage_message([&] { pole.check_domain(one_to_ten, "length"); });
  CHECK(contains(m, "reparam '1/(x-5)' is not finite at target y = 5 of task 'length'"));

  // A pole between the targets is found on the grid.
  Reparam between = Reparam::make("1/(x-5.5)");
  CHECK_THROWS_AS(between.check_domain(one_to_ten, "length"), UsageError);
  // Outside its domain (NaN), at the smallest target: no useless shift suggestion.
  Reparam root = Reparam::make("sqrt(x-3)");
  m = usage_message([&] { root.check_domain(one_to_ten, "length"); });
  CHECK(contains(m, "not finite at target y = 1"));
  CHECK(contains(m, "f(1) = nan"));
  // Constant in x.
  Reparam flat = Reparam::make("x*0+1");
  CHECK(contains(usage_message([&] { flat.check_domain(one_to_ten, "length"); }),
                 "not strictly monotone"));
}

TEST_CASE("bad specs are refused with the rules") {
  std::string m = usage_message([] { Reparam::make("x+*"); });
  CHECK(contains(m, "reparam 'x+*' is neither a built-in nor a valid expression"));
  CHECK(contains(m, "Unexpected operator"));
  CHECK(contains(m, "'identity', 'sqrt', 'log' or 'invsqrt'"));
  CHECK(contains(m, "variable x"));
  m = usage_message([] { Reparam::make("cube"); });
  CHECK(contains(m, "reparam 'cube'"));
  CHECK(contains(m, "'identity', 'sqrt', 'log' or 'invsqrt'"));
  CHECK(contains(usage_message([] { Reparam::make("y+1"); }), "reparam 'y+1'"));
  CHECK(contains(usage_message([] { Reparam::make("x, 2"); }), "one value"));
  CHECK(contains(usage_message([] { Reparam::make("x=3"); }), "assign"));
  CHECK(contains(usage_message([] { Reparam::make("3"); }), "does not use the variable x"));
  CHECK_THROWS_AS(Reparam::make(""), UsageError);
  CHECK(contains(usage_message([] { Reparam::make("log", "", INFINITY); }), "shift"));
}

TEST_CASE("copies and moves of a user reparam outlive the original") {
  auto original = std::make_unique<Reparam>(Reparam::make("x^-0.5", "", 1.0));
  original->check_domain(length_targets(), "length");
  Reparam copy = *original;
  Reparam assigned = Reparam::make("identity");
  assigned = *original;
  Reparam moved_from = *original;
  Reparam moved = std::move(moved_from);
  original.reset();
  for (const Reparam* r : {&copy, &assigned, &moved}) {
    CHECK(r->spec() == "x^-0.5");
    CHECK(close(r->forward(3.0), 0.5, 1e-15));
    CHECK(close(r->inverse(0.5), 3.0, 1e-9));
    check_round_trip(*r, length_targets(), 1e-9);
  }
  // Copies are independent: evaluating one does not disturb another's variable.
  Reparam a = copy;
  CHECK(close(a.forward(8.0), 1.0 / 3.0, 1e-15));
  CHECK(close(copy.forward(15.0), 0.25, 1e-15));
  CHECK(close(a.forward(8.0), 1.0 / 3.0, 1e-15));
  // Given inverses are copied too.
  auto with_inverse = std::make_unique<Reparam>(Reparam::make("x^-0.5", "x^-2"));
  const Reparam c2 = *with_inverse;
  with_inverse.reset();
  CHECK(close(c2.inverse(0.5), 4.0, 1e-15));
}

TEST_CASE("single target and repeated check_domain") {
  Reparam r = Reparam::make("x^-0.5");
  r.check_domain({4.0}, "length");
  check_round_trip(r, {4.0, 9.0}, 1e-9);
  r.check_domain(length_targets(), "length");
  check_round_trip(r, length_targets(), 1e-9);
  CHECK_THROWS_AS(r.check_domain({}, "length"), std::invalid_argument);
  CHECK_THROWS_AS(r.check_domain({1.0, NAN}, "length"), std::invalid_argument);
}

}  // namespace lenlab

// Found by fuzz/fuzz_expression (docs/fuzzing.md): muparser 2.3.3's bytecode optimizer folds a
// constant `a && b` or `a || b` as (int)a && (int)b, undefined behaviour for 1e10 and the like and
// 0 for 0.5 && 1, where evaluation gives 1. Expressions are now evaluated as written.
TEST_CASE("constant && and || in an expression evaluate as written, not folded through int") {
  using lenlab::Reparam;
  CHECK(Reparam::make("x*(0.5&&1)").forward(2.0) == 2.0);
  CHECK(Reparam::make("x*(0.5||0)").forward(3.0) == 3.0);
  CHECK(Reparam::make("x+(1e10||0)").forward(2.0) == 3.0);
  CHECK(Reparam::make("x+(2.1e307&&0.21)").forward(2.0) == 3.0);
  Reparam r = Reparam::make("x*(0.5&&1)", "x/(0.25||0)");
  r.check_domain(lenlab::task_target_values(lenlab::TaskKind::kLength, 1, 20), "length");
  CHECK(r.inverse(r.forward(7.0)) == 7.0);
}

namespace lenlab {

TEST_CASE(
    "a registered reparam (python:NAME) is checked and inverted like the built-in it equals") {
  auto sqrt_fn = std::make_shared<CustomReparam>();
  sqrt_fn->name = "test_root";
  int f_calls = 0;
  sqrt_fn->f = [&f_calls](const double* in, double* out, size_t n) {
    ++f_calls;
    for (size_t i = 0; i < n; ++i) out[i] = std::sqrt(in[i]);
  };
  sqrt_fn->inverse = [](const double* in, double* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
  };
  register_custom_reparam(sqrt_fn);
  Reparam custom = Reparam::make("python:test_root", "", 1.0);
  Reparam builtin = Reparam::make("sqrt", "", 1.0);
  CHECK(custom.is_custom());
  CHECK_FALSE(custom.uses_numerical_inverse());
  const std::vector<double> ys = {1, 2, 3, 10};
  custom.check_domain(ys, "length");
  std::vector<double> many(ys.size());
  f_calls = 0;
  custom.forward_many(ys.data(), many.data(), ys.size());
  CHECK(f_calls == 1);  // the whole array in one call
  std::vector<double> back(ys.size());
  std::vector<unsigned char> clamped(ys.size(), 1);
  custom.inverse_many(many.data(), back.data(), clamped.data(), ys.size());
  for (size_t i = 0; i < ys.size(); ++i) {
    CHECK(many[i] == builtin.forward(ys[i]));
    CHECK(back[i] == doctest::Approx(ys[i]).epsilon(1e-15));
    CHECK(clamped[i] == 0);
  }
  // Without an inverse: bisection on the checked range, as for an expression.
  auto no_inverse = std::make_shared<CustomReparam>(*sqrt_fn);
  no_inverse->name = "test_root_numeric";
  no_inverse->inverse = nullptr;
  register_custom_reparam(no_inverse);
  Reparam numeric = Reparam::make("python:test_root_numeric");
  CHECK(numeric.uses_numerical_inverse());
  numeric.check_domain(ys, "length");
  CHECK(numeric.inverse(std::sqrt(7.0)) == doctest::Approx(7.0).epsilon(1e-12));
  // The array bisection takes numerical_inverse's steps side by side: the same doubles, inside
  // and outside f's range (clamped) and at NaN, with one call of f per step for all of them.
  const std::vector<double> zs = {std::sqrt(7.0), 1.0, std::sqrt(10.0), -1.0, 9.0, NAN, 2.0, 3.1};
  std::vector<double> u(zs.size());
  std::vector<unsigned char> zs_clamped(zs.size());
  f_calls = 0;
  numeric.inverse_many(zs.data(), u.data(), zs_clamped.data(), zs.size());
  CHECK(f_calls > 20);
  CHECK(f_calls < 80);  // a bisection's steps (~45), not ~45 per z
  for (size_t i = 0; i < zs.size(); ++i) {
    bool c = false;
    CHECK(u[i] == numeric.inverse(zs[i], &c));
    CHECK(zs_clamped[i] == c);
  }
  CHECK(zs_clamped[3] == 1);
  CHECK(zs_clamped[5] == 1);

  using lenlab::test::contains;
  using lenlab::test::usage_message;
  CHECK(contains(usage_message([] { Reparam::make("python:nobody"); }),
                 "none named 'nobody' is registered"));
  CHECK(contains(usage_message([] { Reparam::make("python:test_root", "x^2"); }),
                 "is a Python function; give its inverse"));
  auto bad = std::make_shared<CustomReparam>(*sqrt_fn);
  bad->name = "<lambda>";
  CHECK(contains(usage_message([&] { register_custom_reparam(bad); }), "give the function a name"));
}

}  // namespace lenlab
