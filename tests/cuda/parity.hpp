#pragma once
// Helpers of the CUDA model tests: expect_close (tests/expect_close.hpp: |gpu − cpu| ≤ tol +
// |cpu|·eps elementwise, the largest difference always printed) and random float inputs.
#include <cstdint>
#include <random>
#include <vector>

#include "models/cuda/device_buffer.hpp"
#include "tests/support/expect_close.hpp"

namespace lenlab::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(gen);
  return v;
}

}  // namespace lenlab::test
