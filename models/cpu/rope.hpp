#pragma once
// Rotary position embedding (Su et al.): within each head, the pair of dimensions (2k, 2k+1) of q
// and k is rotated by the angle pos·θ_k, θ_k = base^(−2k/hd), pos = the token's position id
// (BOS is 0 by default). q_i·k_j then depends on positions only through pos_i − pos_j. v is not
// rotated. The same table, indexed by a relative distance instead of a position, is what attention
// uses when it applies RoPE itself (ops::AttentionArgs::rope_cos). The table of angles:
// models/ops/tables.hpp's RopeTable.
#include <cmath>
#include <cstddef>
#include <vector>

#include "models/cpu/embedding.hpp"
#include "models/ops/args.hpp"
#include "models/ops/tables.hpp"

namespace lenlab::cpu {

// out [K, N, 3d] = qkv with q and k rotated by their row's position; v copied; padding rows 0.
// cos, sin [positions, hd/2] must cover the largest position.
template <class T>
void rope_forward(T* out, const T* inp, const T* cos, const T* sin, int d, int n_head, ops::Seqs q,
                  ops::Models m = {}) {
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  for (int k = 0; k < m.count; ++k) {
    const int used = used_rows(q, k);
    for (int r = 0; r < q.rows; ++r) {
      const size_t t = static_cast<size_t>(k) * q.rows + r;
      T* y = out + t * C3;
      if (r >= used) {
        for (int col = 0; col < C3; ++col) y[col] = 0;
        continue;
      }
      const T* c = cos + static_cast<size_t>(q.positions[t]) * half;
      const T* sn = sin + static_cast<size_t>(q.positions[t]) * half;
      const T* x = inp + t * C3;
      for (int part = 0; part < 2; ++part)  // q, then k
        for (int h = 0; h < n_head; ++h) {
          const int col = part * d + h * hd;
          for (int i = 0; i < half; ++i) {
            const T x0 = x[col + 2 * i], x1 = x[col + 2 * i + 1];
            y[col + 2 * i] = x0 * c[i] - x1 * sn[i];
            y[col + 2 * i + 1] = x0 * sn[i] + x1 * c[i];
          }
        }
      for (int col = 2 * d; col < C3; ++col) y[col] = x[col];
    }
  }
}

// Adds into dinp [K, N, 3d]: the transpose of the rotation (a rotation by −pos·θ_k); v passes.
template <class T>
void rope_backward(T* dinp, const T* dout, const T* cos, const T* sin, int d, int n_head,
                   ops::Seqs q, ops::Models m = {}) {
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  for (int k = 0; k < m.count; ++k) {
    const int used = used_rows(q, k);
    for (int r = 0; r < used; ++r) {
      const size_t t = static_cast<size_t>(k) * q.rows + r;
      const T* c = cos + static_cast<size_t>(q.positions[t]) * half;
      const T* sn = sin + static_cast<size_t>(q.positions[t]) * half;
      const T* dy = dout + t * C3;
      T* dx = dinp + t * C3;
      for (int part = 0; part < 2; ++part)
        for (int h = 0; h < n_head; ++h) {
          const int col = part * d + h * hd;
          for (int i = 0; i < half; ++i) {
            const T d0 = dy[col + 2 * i], d1 = dy[col + 2 * i + 1];
            dx[col + 2 * i] += d0 * c[i] + d1 * sn[i];
            dx[col + 2 * i + 1] += -d0 * sn[i] + d1 * c[i];
          }
        }
      for (int col = 2 * d; col < C3; ++col) dx[col] += dy[col];
    }
  }
}

}  // namespace lenlab::cpu
