#pragma once
// Token (+ absolute position) embedding, out[t] = token_scale·wte[token_t] + wpe[pos_t], and the
// gather of the rows a head reads. token_scale is 1, or √d_model as Vaswani et al. scale the token
// embedding (§3.4) against a fixed position table (ModelConfig::embedding_scale). wpe may be null
// (no absolute table); a learned table is in each model's parameters (wpe_stride = the models'
// param_stride), a fixed one is shared (wpe_stride 0).
#include <algorithm>
#include <cstddef>

#include "models/ops/args.hpp"

namespace lenlab::cpu {

// The rows of model k that hold tokens (the rest of its `rows` are padding).
inline int used_rows(const ops::Seqs& q, int k) {
  return q.offsets[static_cast<size_t>(k) * (q.n_seq + 1) + q.n_seq];
}

// out [K, N, d]; tokens [K, N]; padding rows 0.
template <class T>
void embedding_forward(T* out, const int* tokens, const T* wte, T token_scale, const T* wpe,
                       size_t wpe_stride, int d, ops::Seqs q, ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    const T* e = wte + k * m.param_stride;
    const T* p = wpe ? wpe + k * wpe_stride : nullptr;
    const int used = used_rows(q, k);
    for (int r = 0; r < q.rows; ++r) {
      const size_t t = static_cast<size_t>(k) * q.rows + r;
      T* y = out + t * d;
      if (r >= used) {
        std::fill_n(y, d, T(0));
        continue;
      }
      const T* et = e + static_cast<size_t>(tokens[t]) * d;
      const T* pt = p ? p + static_cast<size_t>(q.positions[t]) * d : nullptr;
      // (token_scale 1: the sum alone, bit for bit, fused or not.)
      for (int c = 0; c < d; ++c) y[c] = token_scale * et[c] + (pt ? pt[c] : T(0));
    }
  }
}

// Adds token_scale·dout into dwte [vocab, d] and dout into dwpe [n_positions, d] (if not null),
// rows in order. (The table sizes are the CUDA kernels'; positions and tokens are checked against
// them when packed.)
template <class T>
void embedding_backward(T* dwte, T token_scale, T* dwpe, const T* dout, const int* tokens,
                        int vocab, int n_positions, int d, ops::Seqs q, ops::Models m = {}) {
  (void)vocab;
  (void)n_positions;
  for (int k = 0; k < m.count; ++k) {
    const int used = used_rows(q, k);
    for (int r = 0; r < used; ++r) {
      const size_t t = static_cast<size_t>(k) * q.rows + r;
      const T* dy = dout + t * d;
      T* de = dwte + k * m.param_stride + static_cast<size_t>(tokens[t]) * d;
      for (int c = 0; c < d; ++c) de[c] += token_scale * dy[c];
      if (dwpe) {
        T* dp = dwpe + k * m.param_stride + static_cast<size_t>(q.positions[t]) * d;
        for (int c = 0; c < d; ++c) dp[c] += dy[c];
      }
    }
  }
}

// out [K, R, d] = the rows `rows` [K, R] of inp [K, N, d] (a row index < 0 gives 0: padding).
template <class T>
void gather_rows_forward(T* out, const T* inp, const int* rows, int R, int N, int d,
                         ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k)
    for (int i = 0; i < R; ++i) {
      const int r = rows[static_cast<size_t>(k) * R + i];
      T* y = out + (static_cast<size_t>(k) * R + i) * d;
      if (r < 0) {
        std::fill_n(y, d, T(0));
        continue;
      }
      const T* x = inp + (static_cast<size_t>(k) * N + r) * d;
      for (int c = 0; c < d; ++c) y[c] = x[c];
    }
}

// Adds dout [K, R, d] into the rows of dinp [K, N, d] it was gathered from.
template <class T>
void gather_rows_backward(T* dinp, const T* dout, const int* rows, int R, int N, int d,
                          ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k)
    for (int i = 0; i < R; ++i) {
      const int r = rows[static_cast<size_t>(k) * R + i];
      if (r < 0) continue;
      T* dx = dinp + (static_cast<size_t>(k) * N + r) * d;
      const T* dy = dout + (static_cast<size_t>(k) * R + i) * d;
      for (int c = 0; c < d; ++c) dx[c] += dy[c];
    }
}

}  // namespace lenlab::cpu
