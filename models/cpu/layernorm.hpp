#pragma once
// Layer norm over the feature axis: out[t] = (inp[t] − mean_t)·rstd_t ⊙ g + b, eps 1e-5, per model.
// mean and rstd [K, N] are saved for the backward pass. Written with Eigen row-wise expressions so
// the feature loops vectorise.
#include <cmath>

#include "models/cpu/eigen_maps.hpp"
#include "models/ops/args.hpp"

namespace lenlab::cpu {

inline constexpr double kLayerNormEps = 1e-5;

// out [K, N, C]; mean, rstd [K, N] (either may be null when no backward follows).
template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* g, const T* b, int N, int C,
                       ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    const auto gain = ConstRowVectorMap<T>(g + k * m.param_stride, C).array();
    const auto bias = ConstRowVectorMap<T>(b + k * m.param_stride, C).array();
    for (int r = 0; r < N; ++r) {
      const size_t t = size_t(k) * N + r;
      const auto x = ConstRowVectorMap<T>(inp + t * C, C).array();
      const T mu = x.mean();
      const T s = T(1) / std::sqrt((x - mu).square().mean() + T(kLayerNormEps));
      RowVectorMap<T>(out + t * C, C).array() = (x - mu) * s * gain + bias;
      if (mean) mean[t] = mu;
      if (rstd) rstd[t] = s;
    }
  }
}

// Adds into dinp [K, N, C], dg [C], db [C].
template <class T>
void layernorm_backward(T* dinp, T* dg, T* db, const T* dout, const T* inp, const T* g,
                        const T* mean, const T* rstd, int N, int C, ops::Models m = {}) {
  Eigen::Array<T, 1, Eigen::Dynamic> xhat(C), dxhat(C);
  for (int k = 0; k < m.count; ++k) {
    const size_t P = k * m.param_stride;
    const auto gain = ConstRowVectorMap<T>(g + P, C).array();
    auto dgain = RowVectorMap<T>(dg + P, C).array();
    auto dbias = RowVectorMap<T>(db + P, C).array();
    for (int r = 0; r < N; ++r) {
      const size_t t = size_t(k) * N + r, row = t * C;
      const auto dy = ConstRowVectorMap<T>(dout + row, C).array();
      xhat = (ConstRowVectorMap<T>(inp + row, C).array() - mean[t]) * rstd[t];
      dxhat = dy * gain;
      dbias += dy;         // y = ... + b
      dgain += dy * xhat;  // y = xhat ⊙ g + ...
      // xhat = (x − m)·s  =>  dx = s·(dxhat − mean(dxhat) − xhat·mean(dxhat ⊙ xhat))
      RowVectorMap<T>(dinp + row, C).array() +=
          rstd[t] * (dxhat - dxhat.mean() - xhat * (dxhat * xhat).mean());
    }
  }
}

}  // namespace lenlab::cpu
