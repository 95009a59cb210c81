// Tests for reparam/'s checks of what the model can learn and invert: a given inverse on the whole
// dense set the evaluation meets, and f's values in float (check_domain steps 3 and 4). The other
// checks (finite, monotone, the shift) are in test_reparam.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "tests/support/test_support.hpp"
#include "train/run_settings.hpp"

namespace lenlab {
namespace {

using lenlab::test::contains;
using lenlab::test::usage_message;

// Lengths 1..40 and sums 0..40, as in test_reparam.cpp.
std::vector<double> training_lengths_1_40() {
  return task_target_values(TaskKind::kLength, 1, 40);
}
std::vector<double> sums_0_40() {
  return task_target_values(TaskKind::kSum, 1, 40);
}

}  // namespace

TEST_CASE("a given inverse is checked between the targets too, where the model's outputs fall") {
  // Exact at every integer target (sin(pi u) = 0 there), wrong by up to 0.1 between them.
  const std::string wavy = "1/x + 0.1*sin(_pi/x)";
  Reparam r = Reparam::make("1/x", wavy);
  for (const double y : training_lengths_1_40()) {
    CAPTURE(y);
    CHECK(std::abs(r.inverse(r.forward(y)) - y) <= 1e-12 * y);
  }
  CHECK(std::abs(r.inverse(r.forward(1.5)) - 1.4) < 1e-12);
  // The first point of the grid over [1, 40] past y = 1 is 1 + 39/1024.
  std::string m = usage_message([&] { r.check_domain(training_lengths_1_40(), "length"); });
  CHECK(m ==
        "--reparam-inverse '1/x + 0.1*sin(_pi/x)' does not invert --reparam '1/x' at u = "
        "1.038085938 (y = 1.038085938, between the targets of task 'length' (y in [1, 40])): "
        "f(u) = 0.9633113829 but f^-1(f(u)) = 1.026149416; it must give back u to within "
        "1e-6 |u| + 1e-12 at every target, midpoint between targets and point of a "
        "1024-interval grid over their range, where the model's outputs fall: fix it, or leave "
        "it out to invert numerically");
  // With a shift the message says u = y + c; u = y + 1 is an integer at every sum target.
  Reparam shifted = Reparam::make("x^-0.5", "x^-2 + 0.1*sin(_pi*x^-2)", 1.0);
  m = usage_message([&] { shifted.check_domain(sums_0_40(), "sum"); });
  CHECK(contains(m,
                 "--reparam-inverse 'x^-2 + 0.1*sin(_pi*x^-2)' does not invert "
                 "--reparam 'x^-0.5' at u = y + c = "));
  CHECK(contains(m, "between the targets of task 'sum' (y in [0, 40])"));
  // A single target: the grid around it.
  Reparam one = Reparam::make("1/x", wavy);
  CHECK(contains(usage_message([&] { one.check_domain({3.0}, "length"); }),
                 "next to the only target of task 'length'"));
  // Correct inverses pass on the paper's target ranges.
  struct Case {
    const char *f, *inverse;
    double shift;
    TaskKind task;
  };
  for (const Case& c :
       {Case{"1/x", "1/x", 0.0, TaskKind::kLength}, Case{"x^-0.5", "x^-2", 0.0, TaskKind::kLength},
        Case{"x^-0.5", "x^-2", 1.0, TaskKind::kSum},
        Case{"exp(x)", "log(x)", 0.0, TaskKind::kLength},
        Case{"x^2", "sqrt(x)", 0.0, TaskKind::kSum}, Case{"2*x", "x/2", -20.0, TaskKind::kSum},
        Case{"log(x+1)", "exp(x)-1", 0.0, TaskKind::kMean},
        Case{"1/x", "1/x", 0.5, TaskKind::kMeanUniform}}) {
    CAPTURE(c.f);
    CAPTURE(task_name(c.task));
    Reparam ok = Reparam::make(c.f, c.inverse, c.shift);
    CHECK_NOTHROW(ok.check_domain(task_target_values(c.task, 1, 50), task_name(c.task)));
  }
}

TEST_CASE("f must be representable in float at every target") {
  // Underflow: 1e-300 rounds to 0 in float, 1e-40 to a subnormal.
  Reparam tiny = Reparam::make("x*1e-300");
  CHECK(usage_message([&] { tiny.check_domain(training_lengths_1_40(), "length"); }) ==
        "--reparam 'x*1e-300' is too small for float at target y = 1 of task 'length' "
        "(f(1) = 1e-300, nonzero but below the smallest normal float, 1.17549e-38): the model "
        "predicts in float (32-bit), so at every target (y in [1, 40]) f(y + c) must be 0 or of "
        "magnitude 1.17549e-38 to 3.40282e+38 (a normal float), and distinct targets must round "
        "to distinct floats (targets within 1e-6 of the range's width of each other excepted); "
        "scale the reparam up");
  // f = 0 exactly is fine (sum's target 0); the first nonzero target fails.
  std::string m = usage_message([&] { tiny.check_domain(sums_0_40(), "sum"); });
  CHECK(contains(m, "too small for float at target y = 1 of task 'sum'"));
  Reparam subnormal = Reparam::make("x*1e-40");
  CHECK(contains(usage_message([&] { subnormal.check_domain(training_lengths_1_40(), "length"); }),
                 "too small for float at target y = 1"));
  // The bound is the smallest normal float, 1.17549435e-38.
  Reparam just_normal = Reparam::make("x*1.2e-38");
  CHECK_NOTHROW(just_normal.check_domain(training_lengths_1_40(), "length"));
  Reparam just_below = Reparam::make("x*1.1e-38");
  CHECK(contains(usage_message([&] { just_below.check_domain(training_lengths_1_40(), "length"); }),
                 "at target y = 1 of task"));

  // Overflow: the largest float is 3.40282347e+38.
  Reparam huge = Reparam::make("x*1e40");
  m = usage_message([&] { huge.check_domain(training_lengths_1_40(), "length"); });
  CHECK(contains(m,
                 "--reparam 'x*1e40' is too large for float at target y = 1 of task 'length' "
                 "(f(1) = 1e+40, above the largest float, 3.40282e+38)"));
  CHECK(contains(m, "scale the reparam down"));
  Reparam edge = Reparam::make("x*9e36");  // 37 * 9e36 fits, 38 * 9e36 does not
  CHECK(contains(usage_message([&] { edge.check_domain(training_lengths_1_40(), "length"); }),
                 "too large for float at target y = 38 of task 'length'"));
  Reparam fits = Reparam::make("x*8e36");
  CHECK_NOTHROW(fits.check_domain(training_lengths_1_40(), "length"));
}

TEST_CASE("distinct targets must stay distinct in float") {
  // 1 + 1e-9 y is distinct in double for every y but rounds to 1 in float for y <= 40.
  const Reparam flat = Reparam::make("1e-9*x+1");
  CHECK(flat.forward(1.0) != flat.forward(40.0));
  CHECK(static_cast<float>(flat.forward(40.0)) == 1.0f);
  Reparam f = flat;
  std::string m = usage_message([&] { f.check_domain(training_lengths_1_40(), "length"); });
  CHECK(contains(m,
                 "--reparam '1e-9*x+1' rounds targets y = 1 to 40 of task 'length' to the same "
                 "float, 1 (f(1) = 1.000000001, f(40) = 1.00000004), so the model could not "
                 "tell them apart"));
  CHECK(contains(m, "distinct targets must round to distinct floats"));
  CHECK(contains(m, "spread its values (remove a large constant part, or scale it up)"));
  // A few targets merged: float's step at 1 is 1.19e-7.
  Reparam coarse = Reparam::make("1e-7*x+1");
  CHECK(contains(usage_message([&] { coarse.check_domain(training_lengths_1_40(), "length"); }),
                 "to the same float"));
  Reparam fine = Reparam::make("1e-5*x+1");
  CHECK_NOTHROW(fine.check_domain(training_lengths_1_40(), "length"));
  // A large shift merges integer targets (float's step at 1e8 is 8), a moderate one does not.
  Reparam far = Reparam::make("identity", "", 1e8);
  m = usage_message([&] { far.check_domain(training_lengths_1_40(), "length"); });
  CHECK(contains(m,
                 "--reparam 'identity' rounds targets y = 1 to 4 of task 'length' to the same "
                 "float, 100000000 (f(1 + 1e+08) = 100000001, f(4 + 1e+08) = 100000004)"));
  Reparam near = Reparam::make("identity", "", 1e6);
  CHECK_NOTHROW(near.check_domain(training_lengths_1_40(), "length"));
  // Targets closer than 1e-6 of the range's width may merge (float's step at 1000 is 6.1e-5).
  Reparam id = Reparam::make("identity");
  CHECK_NOTHROW(id.check_domain({0.0, 0.5, 1.0, 1.0 + 5e-8}, "mean"));  // 1 + 5e-8 -> 1.0f
  CHECK_NOTHROW(id.check_domain({1000.0, 1000.0 + 5e-7, 1001.0}, "mean"));
  CHECK(contains(usage_message([&] {
                   id.check_domain({1000.0, 1000.0 + 1e-5, 1001.0}, "mean");
                 }),
                 "rounds targets y = 1000 to 1000.00001 of task 'mean' to the same float"));
}

TEST_CASE("the paper's reparams pass every check on the paper's tasks up to l_test = 50") {
  for (const TaskKind task :
       {TaskKind::kLength, TaskKind::kSum, TaskKind::kMean, TaskKind::kMeanUniform}) {
    const std::vector<double> targets = task_target_values(task, 1, 50);
    for (const auto& name : Reparam::builtin_names()) {
      const bool needs_shift = (name == "log" || name == "invsqrt") && task != TaskKind::kLength;
      for (const double shift :
           needs_shift ? std::vector<double>{0.5, 1.0} : std::vector<double>{0.0, 1.0}) {
        CAPTURE(task_name(task));
        CAPTURE(name);
        CAPTURE(shift);
        Reparam r = Reparam::make(name, "", shift);
        CHECK_NOTHROW(r.check_domain(targets, task_name(task)));
      }
    }
  }
}

TEST_CASE("resolve refuses a reparam the float model cannot represent") {
  TrainSpec s;
  s.reparam = "x*1e-300";
  CHECK(contains(usage_message([&] { resolve(s); }),
                 "--reparam 'x*1e-300' is too small for float at target y = 1 of task 'length'"));
  s.reparam = "1/x";
  s.reparam_inverse = "1/x + 0.1*sin(_pi/x)";
  CHECK(contains(usage_message([&] { resolve(s); }), "--reparam-inverse"));
  s.reparam_inverse = "1/x";
  CHECK_NOTHROW(resolve(s));
}

}  // namespace lenlab
