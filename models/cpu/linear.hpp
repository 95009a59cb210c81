#pragma once
// Linear layer over all rows: out [K, N, OC] = inp [K, N, C] · w [C, OC] + b [OC], per model.
// Float products run on OpenBLAS where it is tuned for the core (models/cpu/blas_gemm.hpp), double
// ones (the gradient checks) on Eigen.
#include <type_traits>

#include "models/cpu/blas_gemm.hpp"
#include "models/cpu/eigen_maps.hpp"
#include "models/ops/args.hpp"

namespace lenlab::cpu {

template <class T>
bool linear_on_blas() {
  if constexpr (std::is_same_v<T, float>)
    return gemm_kernel() == GemmKernel::kOpenBlas;
  else
    return false;
}

template <class T>
void linear_forward(T* out, const T* inp, const T* w, const T* b, int N, int C, int OC,
                    ops::Models m = {}) {
  const bool blas = linear_on_blas<T>();
  for (int k = 0; k < m.count; ++k) {
    T* y_k = out + size_t(k) * N * OC;
    const T* x_k = inp + size_t(k) * N * C;
    const T* w_k = w + k * m.param_stride;
    MatrixMap<T> y(y_k, N, OC);
    if constexpr (std::is_same_v<T, float>) {
      if (blas) {
        // The bias rows first, then sgemm adds the product into them (beta 1): OpenBLAS's beta 0
        // clears y in a pass of its own, and the bias after it is one more (1.10× over the
        // models' shapes, bench/small_gemm/06). b + Σ is Σ + b to the bit while sgemm sums the C
        // products in one block (C ≤ 256 measured: every product of the default model); past
        // that, the results move by float rounding.
        if (b) y.rowwise() = ConstRowVectorMap<T>(b + k * m.param_stride, OC);
        blas_sgemm(false, false, N, OC, C, x_k, C, w_k, OC, b ? 1.f : 0.f, y_k, OC);
        continue;
      }
    }
    y.noalias() = ConstMatrixMap<T>(x_k, N, C) * ConstMatrixMap<T>(w_k, C, OC);
    if (b) y.rowwise() += ConstRowVectorMap<T>(b + k * m.param_stride, OC);
  }
}

// Adds into dinp [K, N, C], dw [C, OC], db [OC] (any may be null to skip it).
template <class T>
void linear_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, int N, int C,
                     int OC, ops::Models m = {}) {
  const bool blas = linear_on_blas<T>();
  for (int k = 0; k < m.count; ++k) {
    const size_t P = k * m.param_stride;
    const T* dy_k = dout + size_t(k) * N * OC;
    const T* x_k = inp + size_t(k) * N * C;
    ConstMatrixMap<T> dy(dy_k, N, OC);
    if constexpr (std::is_same_v<T, float>) {
      if (blas) {
        // out = inp·w  =>  dinp += dout·wᵀ [N, C];  dw += inpᵀ·dout [C, OC]
        if (dinp)
          blas_sgemm(false, true, N, C, OC, dy_k, OC, w + P, OC, 1.f, dinp + size_t(k) * N * C, C);
        if (dw) blas_sgemm(true, false, C, OC, N, x_k, C, dy_k, OC, 1.f, dw + P, OC);
      }
    }
    if (!blas) {
      // out = inp·w  =>  dinp = dout·wᵀ
      if (dinp)
        MatrixMap<T>(dinp + size_t(k) * N * C, N, C).noalias() +=
            dy * ConstMatrixMap<T>(w + P, C, OC).transpose();
      // out = inp·w  =>  dw = inpᵀ·dout
      if (dw)
        MatrixMap<T>(dw + P, C, OC).noalias() += ConstMatrixMap<T>(x_k, N, C).transpose() * dy;
    }
    // out = ... + b  =>  db = Σ_rows dout
    if (db) RowVectorMap<T>(db + P, OC) += dy.colwise().sum();
  }
}

}  // namespace lenlab::cpu
