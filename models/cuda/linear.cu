// Linear layers (models/cpu/linear.hpp): cuBLAS strided-batched products over the model index,
// small kernels for the bias and its gradient.
#include <cublas_v2.h>

#include "models/cuda/blas.hpp"
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

// out [K·N, OC] += b (per model), rows of model k use b + k·P.
__global__ void add_bias_kernel(float* out, const float* b, int N, int OC, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * N * OC;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t k = i / (static_cast<size_t>(N) * OC);
    out[i] += b[k * P + i % OC];
  }
}

// db [OC] (per model) += Σ_rows dout: one thread per (model, column), rows in order.
__global__ void bias_grad_kernel(float* db, const float* dout, int N, int OC, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * OC;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t k = i / OC, c = i % OC;
    const float* d = dout + k * N * OC + c;
    float acc = 0;
    for (int r = 0; r < N; ++r) acc += d[static_cast<size_t>(r) * OC];
    db[k * P + c] += acc;
  }
}

}  // namespace

void linear_forward(float* out, const float* inp, const float* w, const float* b, int N, int C,
                    int OC, Models m) {
  if (N == 0) return;
  const float one = 1, zero = 0;
  // Row-major out[N,OC] = inp[N,C]·w[C,OC] is column-major outᵀ = wᵀ·inpᵀ.
  LENLAB_CUBLAS_CHECK(cublas().sgemm_strided_batched(
      blas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, OC, N, C, &one, w, OC,
      static_cast<long long>(m.param_stride), inp, C, static_cast<long long>(N) * C, &zero, out, OC,
      static_cast<long long>(N) * OC, m.count));
  if (b) {
    add_bias_kernel<<<blocks_for(static_cast<size_t>(m.count) * N * OC), kThreads>>>(
        out, b, N, OC, m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("add_bias_kernel");
  }
}

void linear_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, int N, int C, int OC, Models m) {
  if (N == 0) return;
  const float one = 1;
  if (dinp)  // dinp[N,C] += dout[N,OC]·wᵀ  ⇔  dinpᵀ += w·doutᵀ (column-major: (wᵀ)ᵀ)
    LENLAB_CUBLAS_CHECK(cublas().sgemm_strided_batched(
        blas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, C, N, OC, &one, w, OC,
        static_cast<long long>(m.param_stride), dout, OC, static_cast<long long>(N) * OC, &one,
        dinp, C, static_cast<long long>(N) * C, m.count));
  if (dw)  // dw[C,OC] += inpᵀ·dout  ⇔  dwᵀ(OC×C) += doutᵀ(OC×N)·inp(N×C)
    LENLAB_CUBLAS_CHECK(cublas().sgemm_strided_batched(
        blas_handle(), CUBLAS_OP_N, CUBLAS_OP_T, OC, C, N, &one, dout, OC,
        static_cast<long long>(N) * OC, inp, C, static_cast<long long>(N) * C, &one, dw, OC,
        static_cast<long long>(m.param_stride), m.count));
  if (db) {
    bias_grad_kernel<<<blocks_for(static_cast<size_t>(m.count) * OC), kThreads>>>(
        db, dout, N, OC, m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("bias_grad_kernel");
  }
}

}  // namespace lenlab::cuda
