#pragma once
// Host-side tables that both backends' operations read, computed once on the host (in double,
// then rounded) and uploaded where the backend keeps its memory: RoPE's angles, ALiBi's slopes,
// and where each sequence's attention probabilities lie in the training forward's buffer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lenlab::ops {

template <class T>
struct RopeTable {
  int half = 0;                 // hd / 2
  int positions = 0;            // rows computed so far
  double position_scale = 1.0;  // angle(p, k) = p·position_scale·θ_k (PI: 1/s)
  std::vector<double> theta;    // [half]
  std::vector<T> cos, sin;      // [positions, half]

  // Grows the table to cover positions 0 .. n-1 for these angles (computed in double, then
  // rounded); other angles start it afresh (models/rope_scaling.hpp's RopeAngles). True when any
  // entry changed.
  bool ensure(int n, const std::vector<double>& new_theta, double new_position_scale = 1.0) {
    if (new_theta != theta || new_position_scale != position_scale) positions = 0;
    theta = new_theta;
    position_scale = new_position_scale;
    half = static_cast<int>(theta.size());
    if (n <= positions) return false;
    cos.resize(static_cast<size_t>(n) * half);
    sin.resize(static_cast<size_t>(n) * half);
    for (int p = positions; p < n; ++p)
      for (int k = 0; k < half; ++k) {
        const double angle = p * position_scale * theta[k];
        cos[static_cast<size_t>(p) * half + k] = static_cast<T>(std::cos(angle));
        sin[static_cast<size_t>(p) * half + k] = static_cast<T>(std::sin(angle));
      }
    positions = n;
    return true;
  }
  // Plain RoPE: θ_k = base^(−2k/hd).
  bool ensure(int n, int head_dim, double rope_base) {
    std::vector<double> plain(head_dim / 2);
    for (int k = 0; k < head_dim / 2; ++k) plain[k] = std::pow(rope_base, -2.0 * k / head_dim);
    return ensure(n, plain);
  }
};

// Offsets of each sequence's probability blocks in the training forward's `att`: [n_seq + 1].
inline std::vector<int64_t> attention_offsets(const int* offsets, int n_seq, int n_head) {
  std::vector<int64_t> out(n_seq + 1, 0);
  for (int s = 0; s < n_seq; ++s) {
    const int64_t L = offsets[s + 1] - offsets[s];
    out[s + 1] = out[s] + int64_t{n_head} * L * L;
  }
  return out;
}

// Press et al.'s slopes: a geometric sequence starting at 2^(-8/n) with that ratio; for a head
// count that is not a power of two, the closest power's slopes plus every other slope of the next.
inline std::vector<double> alibi_slopes(int n_head) {
  auto pow2_slopes = [](int n) {
    std::vector<double> s(n);
    const double start = std::pow(2.0, -8.0 / n);
    for (int i = 0; i < n; ++i) s[i] = std::pow(start, i + 1);
    return s;
  };
  int closest = 1;
  while (closest * 2 <= n_head) closest *= 2;
  std::vector<double> slopes = pow2_slopes(closest);
  if (closest < n_head) {
    const std::vector<double> extra = pow2_slopes(2 * closest);
    for (int i = 0; static_cast<int>(slopes.size()) < n_head; i += 2) slopes.push_back(extra[i]);
  }
  return slopes;
}

}  // namespace lenlab::ops
