#pragma once
// Rotary position embedding (Su et al.): within each head, the pair of dimensions (2k, 2k+1) of q
// and k is rotated by the angle pos·θ_k, θ_k = base^(−2k/hd), pos = the token's index in its
// sequence (BOS is 0). q_i·k_j then depends on positions only through i − j. v is not rotated.
#include <cmath>
#include <cstddef>
#include <vector>

namespace lenlab::cpu {

template <class T>
struct RopeTable {
  int half = 0;       // hd / 2
  int positions = 0;  // rows computed so far
  double base = 10000.0;
  std::vector<T> cos, sin;  // [positions, half]

  // Grows the table to cover positions 0 .. n-1 (angles computed in double, then rounded).
  void ensure(int n, int head_dim, double rope_base) {
    if (head_dim / 2 != half || rope_base != base) positions = 0;
    half = head_dim / 2;
    base = rope_base;
    if (n <= positions) return;
    cos.resize(static_cast<size_t>(n) * half);
    sin.resize(static_cast<size_t>(n) * half);
    for (int p = positions; p < n; ++p)
      for (int k = 0; k < half; ++k) {
        const double angle = p * std::pow(base, -2.0 * k / head_dim);
        cos[static_cast<size_t>(p) * half + k] = static_cast<T>(std::cos(angle));
        sin[static_cast<size_t>(p) * half + k] = static_cast<T>(std::sin(angle));
      }
    positions = n;
  }
};

// out [N, 3d] = qkv with q and k rotated; v copied. table must cover the longest sequence.
template <class T>
void rope_forward(T* out, const T* inp, const int* offsets, int n_seq, int d, int n_head,
                  const RopeTable<T>& table) {
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  for (int s = 0; s < n_seq; ++s)
    for (int t = offsets[s]; t < offsets[s + 1]; ++t) {
      const int pos = t - offsets[s];
      const T* c = table.cos.data() + static_cast<size_t>(pos) * half;
      const T* sn = table.sin.data() + static_cast<size_t>(pos) * half;
      const T* x = inp + static_cast<size_t>(t) * C3;
      T* y = out + static_cast<size_t>(t) * C3;
      for (int part = 0; part < 2; ++part)  // q, then k
        for (int h = 0; h < n_head; ++h) {
          const int col = part * d + h * hd;
          for (int k = 0; k < half; ++k) {
            const T x0 = x[col + 2 * k], x1 = x[col + 2 * k + 1];
            y[col + 2 * k] = x0 * c[k] - x1 * sn[k];
            y[col + 2 * k + 1] = x0 * sn[k] + x1 * c[k];
          }
        }
      for (int col = 2 * d; col < C3; ++col) y[col] = x[col];
    }
}

// Adds into dinp: the transpose of the rotation (a rotation by −pos·θ_k); v passes through.
template <class T>
void rope_backward(T* dinp, const T* dout, const int* offsets, int n_seq, int d, int n_head,
                   const RopeTable<T>& table) {
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  for (int s = 0; s < n_seq; ++s)
    for (int t = offsets[s]; t < offsets[s + 1]; ++t) {
      const int pos = t - offsets[s];
      const T* c = table.cos.data() + static_cast<size_t>(pos) * half;
      const T* sn = table.sin.data() + static_cast<size_t>(pos) * half;
      const T* dy = dout + static_cast<size_t>(t) * C3;
      T* dx = dinp + static_cast<size_t>(t) * C3;
      for (int part = 0; part < 2; ++part)
        for (int h = 0; h < n_head; ++h) {
          const int col = part * d + h * hd;
          for (int k = 0; k < half; ++k) {
            const T d0 = dy[col + 2 * k], d1 = dy[col + 2 * k + 1];
            dx[col + 2 * k] += d0 * c[k] + d1 * sn[k];
            dx[col + 2 * k + 1] += -d0 * sn[k] + d1 * c[k];
          }
        }
      for (int col = 2 * d; col < C3; ++col) dx[col] += dy[col];
    }
}

}  // namespace lenlab::cpu
