#pragma once
// Linear layer over all rows: out [K, N, OC] = inp [K, N, C] · w [C, OC] + b [OC], per model.
#include "models/cpu/eigen_maps.hpp"
#include "models/ops/args.hpp"

namespace lenlab::cpu {

template <class T>
void linear_forward(T* out, const T* inp, const T* w, const T* b, int N, int C, int OC,
                    ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    MatrixMap<T> y(out + size_t(k) * N * OC, N, OC);
    y.noalias() = ConstMatrixMap<T>(inp + size_t(k) * N * C, N, C) *
                  ConstMatrixMap<T>(w + k * m.param_stride, C, OC);
    if (b) y.rowwise() += ConstRowVectorMap<T>(b + k * m.param_stride, OC);
  }
}

// Adds into dinp [K, N, C], dw [C, OC], db [OC] (any may be null to skip it).
template <class T>
void linear_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, int N, int C,
                     int OC, ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    const size_t P = k * m.param_stride;
    ConstMatrixMap<T> dy(dout + size_t(k) * N * OC, N, OC);
    // out = inp·w  =>  dinp = dout·wᵀ
    if (dinp)
      MatrixMap<T>(dinp + size_t(k) * N * C, N, C).noalias() +=
          dy * ConstMatrixMap<T>(w + P, C, OC).transpose();
    // out = inp·w  =>  dw = inpᵀ·dout
    if (dw)
      MatrixMap<T>(dw + P, C, OC).noalias() +=
          ConstMatrixMap<T>(inp + size_t(k) * N * C, N, C).transpose() * dy;
    // out = ... + b  =>  db = Σ_rows dout
    if (db) RowVectorMap<T>(db + P, OC) += dy.colwise().sum();
  }
}

}  // namespace lenlab::cpu
