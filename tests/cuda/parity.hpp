#pragma once
// Comparing a CUDA result with the CPU backend's: |gpu − cpu| ≤ tol + |cpu|·eps elementwise, with
// the largest difference always printed so a passing test still shows how close it came.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "models/cuda/device_buffer.hpp"

namespace lenlab::test {

// eps for float work: float's unit roundoff times a small growth factor for sums of ~100 terms.
inline constexpr double kFloatEps = 1e-5;

template <class A, class B>
void expect_close(const std::string& what, const A& gpu, const B& cpu, double tol,
                  double eps = kFloatEps) {
  REQUIRE(gpu.size() >= cpu.size());
  double max_diff = 0, max_ref = 0;
  size_t worst = 0, bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double g = static_cast<double>(gpu[i]), c = static_cast<double>(cpu[i]);
    const double diff = std::abs(g - c);
    if (!(diff <= tol + std::abs(c) * eps)) ++bad;  // NaN counts as bad
    if (!(diff <= max_diff)) {
      max_diff = diff;
      worst = i;
    }
    max_ref = std::max(max_ref, std::abs(c));
  }
  std::printf("  %-40s n=%-8zu max|diff| %.3e (at %zu, cpu %.6g)  max|cpu| %.3g\n", what.c_str(),
              cpu.size(), max_diff, worst, cpu.empty() ? 0.0 : static_cast<double>(cpu[worst]),
              max_ref);
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << cpu.size()
                               << " entries differ by more than " << tol << " + |cpu|·" << eps
                               << "; max diff " << max_diff << " at " << worst);
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

}  // namespace lenlab::test
