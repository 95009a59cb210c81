// tasks/target_variance.hpp against brute force: every bit sequence of every training length,
// each with its probability, and the closed form Var(uniform 1..n) = (n² − 1)/12 for length.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "tasks/target_variance.hpp"
#include "tasks/task.hpp"

namespace lenlab {
namespace {

// Var(y) by enumerating all 2^l sequences of each length l in l_min..l_max: fair bits weigh each
// 2^-l; mean-uniform draws #ones uniform in 0..l, then positions, so a sequence with k ones
// weighs 1/((l + 1)·C(l, k)).
double brute_force_variance(TaskKind task, int l_min, int l_max) {
  double m1 = 0, m2 = 0;
  const double p_length = 1.0 / (l_max - l_min + 1);
  for (int l = l_min; l <= l_max; ++l)
    for (unsigned bits = 0; bits < (1u << l); ++bits) {
      const int k = __builtin_popcount(bits);
      const double p =
          task == TaskKind::kMeanUniform
              ? 1.0 / ((l + 1) * std::tgamma(l + 1) / (std::tgamma(k + 1) * std::tgamma(l - k + 1)))
              : std::ldexp(1.0, -l);
      const double y = task_target(task, l, k);
      m1 += p_length * p * y;
      m2 += p_length * p * y * y;
    }
  return m2 - m1 * m1;
}

TEST_CASE("target_variance: every scalar task equals brute force over all sequences") {
  for (const char* name : {"mean", "length", "sum", "mean-uniform"})
    for (const auto& [lo, hi] : {std::pair{1, 1}, {1, 10}, {3, 12}, {7, 7}}) {
      CAPTURE(name);
      CAPTURE(lo);
      CAPTURE(hi);
      const TaskKind task = parse_task(name);
      CHECK(target_variance(task, lo, hi) ==
            doctest::Approx(brute_force_variance(task, lo, hi)).epsilon(1e-10));
    }
}

TEST_CASE("target_variance: the length task's is the discrete uniform's (n^2 - 1)/12") {
  for (int n : {1, 2, 20, 100})
    CHECK(target_variance(TaskKind::kLength, 1, n) == doctest::Approx((n * n - 1) / 12.0));
}

TEST_CASE("target_variance: bad ranges and token tasks are refused") {
  CHECK_THROWS_AS(target_variance(TaskKind::kLength, 0, 5), UsageError);
  CHECK_THROWS_AS(target_variance(TaskKind::kLength, 6, 5), UsageError);
  CHECK_THROWS_AS(target_variance(TaskKind::kPasskey, 1, 5), std::logic_error);
}

}  // namespace
}  // namespace lenlab
