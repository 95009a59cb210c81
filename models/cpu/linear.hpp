#pragma once
// Linear layer over all tokens: out [N, OC] = inp [N, C] · w [C, OC] + b [OC].
#include "models/cpu/eigen_maps.hpp"

namespace lenlab::cpu {

template <class T>
void linear_forward(T* out, const T* inp, const T* w, const T* b, int N, int C, int OC) {
  MatrixMap<T> y(out, N, OC);
  y.noalias() = ConstMatrixMap<T>(inp, N, C) * ConstMatrixMap<T>(w, C, OC);
  if (b) y.rowwise() += ConstRowVectorMap<T>(b, OC);
}

// Adds into dinp, dw, db (any may be null to skip it).
template <class T>
void linear_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, int N, int C,
                     int OC) {
  ConstMatrixMap<T> dy(dout, N, OC);
  // out = inp·w  =>  dinp = dout·wᵀ
  if (dinp) MatrixMap<T>(dinp, N, C).noalias() += dy * ConstMatrixMap<T>(w, C, OC).transpose();
  // out = inp·w  =>  dw = inpᵀ·dout
  if (dw) MatrixMap<T>(dw, C, OC).noalias() += ConstMatrixMap<T>(inp, N, C).transpose() * dy;
  // out = ... + b  =>  db = Σ_rows dout
  if (db) RowVectorMap<T>(db, OC) += dy.colwise().sum();
}

}  // namespace lenlab::cpu
