#pragma once
// Layer norm over the feature axis: out[t] = (inp[t] - mean_t)·rstd_t ⊙ g + b, eps 1e-5.
// mean and rstd [N] are saved for the backward pass.
#include <cmath>

namespace lenlab::cpu {

inline constexpr double kLayerNormEps = 1e-5;

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* g, const T* b, int N,
                       int C) {
  for (int t = 0; t < N; ++t) {
    const T* x = inp + static_cast<size_t>(t) * C;
    T m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    T v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;
    const T s = T(1) / std::sqrt(v + T(kLayerNormEps));
    T* y = out + static_cast<size_t>(t) * C;
    for (int i = 0; i < C; ++i) y[i] = (x[i] - m) * s * g[i] + b[i];
    mean[t] = m;
    rstd[t] = s;
  }
}

// Adds into dinp, dg, db.
template <class T>
void layernorm_backward(T* dinp, T* dg, T* db, const T* dout, const T* inp, const T* g,
                        const T* mean, const T* rstd, int N, int C) {
  for (int t = 0; t < N; ++t) {
    const T* x = inp + static_cast<size_t>(t) * C;
    const T* dy = dout + static_cast<size_t>(t) * C;
    T* dx = dinp + static_cast<size_t>(t) * C;
    const T m = mean[t], s = rstd[t];
    // With xhat = (x - m)·s and dxhat = dy ⊙ g:
    // dx = s·(dxhat - mean(dxhat) - xhat·mean(dxhat ⊙ xhat))
    T mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (int i = 0; i < C; ++i) {
      const T xhat = (x[i] - m) * s;
      const T dxhat = dy[i] * g[i];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat /= C;
    mean_dxhat_xhat /= C;
    for (int i = 0; i < C; ++i) {
      const T xhat = (x[i] - m) * s;
      db[i] += dy[i];         // y = ... + b
      dg[i] += dy[i] * xhat;  // y = xhat ⊙ g + ...
      dx[i] += s * (dy[i] * g[i] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

}  // namespace lenlab::cpu
