#pragma once
// Comparing a result with a reference elementwise: |got − ref| ≤ tol + |ref|·eps, with the largest
// difference always printed, so a passing test still shows how close it came. Shared by the
// backend table (tests/backend_runner.hpp) and the CUDA model tests (tests/cuda/parity.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace lenlab::test {

// eps for float work: float's unit roundoff times a small growth factor for sums of ~100 terms.
inline constexpr double kFloatEps = 1e-5;

// Returns the largest |got − ref|. Equal entries (the same infinity included) differ by 0; a NaN
// that the reference does not have fails.
template <class A, class B>
double expect_close(const std::string& what, const A& got, const B& ref, double tol,
                    double eps = kFloatEps) {
  REQUIRE_MESSAGE(got.size() >= ref.size(), what << ": " << got.size() << " values for "
                                                 << ref.size() << " reference values");
  double max_diff = 0, max_ref = 0;
  size_t worst = 0, bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    const double diff = g == r ? 0.0 : std::abs(g - r);
    if (!(diff <= tol + std::abs(r) * eps)) ++bad;  // NaN counts as bad
    if (!(diff <= max_diff)) {
      max_diff = diff;
      worst = i;
    }
    if (std::isfinite(r)) max_ref = std::max(max_ref, std::abs(r));
  }
  std::printf("  %-72s n=%-6zu max|diff| %.3e (at %zu, ref %.6g)  max|ref| %.3g\n", what.c_str(),
              ref.size(), max_diff, worst, ref.empty() ? 0.0 : static_cast<double>(ref[worst]),
              max_ref);
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << ref.size()
                               << " entries differ by more than " << tol << " + |ref|·" << eps
                               << "; max diff " << max_diff << " at " << worst);
  return max_diff;
}

}  // namespace lenlab::test
