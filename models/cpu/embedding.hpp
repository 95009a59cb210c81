#pragma once
// Token (+ learned position) embedding: out[t] = wte[token_t] + wpe[pos_t], pos_t = the token's
// index within its sequence. wpe may be null (every other positional encoding).
#include <cstddef>

namespace lenlab::cpu {

template <class T>
void embedding_forward(T* out, const int* tokens, const int* offsets, int n_seq, const T* wte,
                       const T* wpe, int d) {
  for (int s = 0; s < n_seq; ++s)
    for (int t = offsets[s]; t < offsets[s + 1]; ++t) {
      const T* e = wte + static_cast<size_t>(tokens[t]) * d;
      const T* p = wpe ? wpe + static_cast<size_t>(t - offsets[s]) * d : nullptr;
      T* y = out + static_cast<size_t>(t) * d;
      for (int c = 0; c < d; ++c) y[c] = e[c] + (p ? p[c] : T(0));
    }
}

// Adds into dwte and dwpe (if not null).
template <class T>
void embedding_backward(T* dwte, T* dwpe, const T* dout, const int* tokens, const int* offsets,
                        int n_seq, int d) {
  for (int s = 0; s < n_seq; ++s)
    for (int t = offsets[s]; t < offsets[s + 1]; ++t) {
      const T* dy = dout + static_cast<size_t>(t) * d;
      T* de = dwte + static_cast<size_t>(tokens[t]) * d;
      for (int c = 0; c < d; ++c) de[c] += dy[c];
      if (dwpe) {
        T* dp = dwpe + static_cast<size_t>(t - offsets[s]) * d;
        for (int c = 0; c < d; ++c) dp[c] += dy[c];
      }
    }
}

// out [n_seq, d] = the last row (the EOS token) of each sequence of inp [N, d].
template <class T>
void gather_last_forward(T* out, const T* inp, const int* offsets, int n_seq, int d) {
  for (int s = 0; s < n_seq; ++s) {
    const T* x = inp + static_cast<size_t>(offsets[s + 1] - 1) * d;
    for (int c = 0; c < d; ++c) out[static_cast<size_t>(s) * d + c] = x[c];
  }
}

// Adds into dinp's last row of each sequence.
template <class T>
void gather_last_backward(T* dinp, const T* dout, const int* offsets, int n_seq, int d) {
  for (int s = 0; s < n_seq; ++s) {
    T* dx = dinp + static_cast<size_t>(offsets[s + 1] - 1) * d;
    for (int c = 0; c < d; ++c) dx[c] += dout[static_cast<size_t>(s) * d + c];
  }
}

}  // namespace lenlab::cpu
