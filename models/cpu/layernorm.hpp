#pragma once
// Layer norm over the feature axis: out[t] = (inp[t] − mean_t)·rstd_t ⊙ g + b, eps 1e-5.
// mean and rstd [N] are saved for the backward pass. Written with Eigen row-wise expressions so
// the feature loops vectorise.
#include <cmath>

#include "models/cpu/eigen_maps.hpp"

namespace lenlab::cpu {

inline constexpr double kLayerNormEps = 1e-5;

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* g, const T* b, int N,
                       int C) {
  const auto gain = ConstRowVectorMap<T>(g, C).array();
  const auto bias = ConstRowVectorMap<T>(b, C).array();
  for (int t = 0; t < N; ++t) {
    const auto x = ConstRowVectorMap<T>(inp + static_cast<size_t>(t) * C, C).array();
    const T m = x.mean();
    const T s = T(1) / std::sqrt((x - m).square().mean() + T(kLayerNormEps));
    RowVectorMap<T>(out + static_cast<size_t>(t) * C, C).array() = (x - m) * s * gain + bias;
    mean[t] = m;
    rstd[t] = s;
  }
}

// Adds into dinp, dg, db.
template <class T>
void layernorm_backward(T* dinp, T* dg, T* db, const T* dout, const T* inp, const T* g,
                        const T* mean, const T* rstd, int N, int C) {
  const auto gain = ConstRowVectorMap<T>(g, C).array();
  auto dgain = RowVectorMap<T>(dg, C).array();
  auto dbias = RowVectorMap<T>(db, C).array();
  Eigen::Array<T, 1, Eigen::Dynamic> xhat(C), dxhat(C);
  for (int t = 0; t < N; ++t) {
    const size_t row = static_cast<size_t>(t) * C;
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

}  // namespace lenlab::cpu
