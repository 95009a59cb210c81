#pragma once
// A small, fully specified random number generator (xoshiro256**, seeded through splitmix64).
// Why not <random>: the standard distributions are implementation-defined, and lenlab promises
// that a seed gives bit-identical data and weights on every platform and standard library.
#include <cmath>
#include <cstdint>

namespace lenlab {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : state_) s = splitmix64(x);
  }

  // An independent stream for (seed, stream): e.g. the evaluation set of length l.
  static Rng stream(uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
    return Rng(splitmix64(x));
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi] (inclusive), unbiased (rejection on the top bits).
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<int64_t>(next_u64());  // full 64-bit range
    const uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
    uint64_t x;
    do {
      x = next_u64();
    } while (x >= limit);
    return lo + static_cast<int64_t>(x % range);
  }

  bool bit() { return (next_u64() >> 63) != 0; }

  // Standard normal (Box-Muller; one value per call, the pair's second value is discarded so the
  // stream position never depends on call history).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_[4];
};

}  // namespace lenlab
