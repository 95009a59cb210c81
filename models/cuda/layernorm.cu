// Layer norm (models/cpu/layernorm.hpp): a warp per row; parameter gradients a thread per
// (model, column) over the rows in order, so sums never depend on scheduling.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

// One warp per row of K·N rows.
__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp,
                                         const float* g, const float* b, int N, int C, int K,
                                         size_t P) {
  const int lane = threadIdx.x % 32;
  const size_t rows = static_cast<size_t>(K) * N;
  for (size_t row = (global_thread()) / 32; row < rows; row += grid_threads() / 32) {
    const size_t k = row / N;
    const float* x = inp + row * C;
    float s = 0;
    for (int c = lane; c < C; c += 32) s += x[c];
    const float m = warp_sum(s) / C;
    float v = 0;
    for (int c = lane; c < C; c += 32) v += (x[c] - m) * (x[c] - m);
    const float r = 1.0f / sqrtf(warp_sum(v) / C + 1e-5f);
    const float* gk = g + k * P;
    const float* bk = b + k * P;
    float* y = out + row * C;
    for (int c = lane; c < C; c += 32) y[c] = (x[c] - m) * r * gk[c] + bk[c];
    if (lane == 0) {  // either may be null (no backward follows)
      if (mean) mean[row] = m;
      if (rstd) rstd[row] = r;
    }
  }
}

__global__ void layernorm_backward_input_kernel(float* dinp, const float* dout, const float* inp,
                                                const float* g, const float* mean,
                                                const float* rstd, int N, int C, int K, size_t P) {
  const int lane = threadIdx.x % 32;
  const size_t rows = static_cast<size_t>(K) * N;
  for (size_t row = (global_thread()) / 32; row < rows; row += grid_threads() / 32) {
    const size_t k = row / N;
    const float* x = inp + row * C;
    const float* dy = dout + row * C;
    const float* gk = g + k * P;
    const float m = mean[row], r = rstd[row];
    float sum_dxhat = 0, sum_dxhat_xhat = 0;
    for (int c = lane; c < C; c += 32) {
      const float xhat = (x[c] - m) * r, dxhat = dy[c] * gk[c];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * xhat;
    }
    const float mean_dxhat = warp_sum(sum_dxhat) / C;
    const float mean_dxhat_xhat = warp_sum(sum_dxhat_xhat) / C;
    float* dx = dinp + row * C;
    for (int c = lane; c < C; c += 32) {
      const float xhat = (x[c] - m) * r, dxhat = dy[c] * gk[c];
      dx[c] += r * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

// dg, db per (model, column), rows in order.
__global__ void layernorm_backward_params_kernel(float* dg, float* db, const float* dout,
                                                 const float* inp, const float* mean,
                                                 const float* rstd, int N, int C, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * C;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t k = i / C, c = i % C;
    float acc_g = 0, acc_b = 0;
    for (int r = 0; r < N; ++r) {
      const size_t row = k * N + r;
      const float dy = dout[row * C + c];
      acc_b += dy;
      acc_g += dy * (inp[row * C + c] - mean[row]) * rstd[row];
    }
    dg[k * P + c] += acc_g;
    db[k * P + c] += acc_b;
  }
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* g,
                       const float* b, int N, int C, Models m) {
  const size_t rows = static_cast<size_t>(m.count) * N;
  if (rows == 0) return;
  layernorm_forward_kernel<<<blocks_for(rows * 32), kThreads>>>(out, mean, rstd, inp, g, b, N, C,
                                                                m.count, m.param_stride);
  LENLAB_CHECK_LAUNCH("layernorm_forward_kernel");
}

void layernorm_backward(float* dinp, float* dg, float* db, const float* dout, const float* inp,
                        const float* g, const float* mean, const float* rstd, int N, int C,
                        Models m) {
  const size_t rows = static_cast<size_t>(m.count) * N;
  if (rows == 0) return;
  layernorm_backward_input_kernel<<<blocks_for(rows * 32), kThreads>>>(
      dinp, dout, inp, g, mean, rstd, N, C, m.count, m.param_stride);
  LENLAB_CHECK_LAUNCH("layernorm_backward_input_kernel");
  layernorm_backward_params_kernel<<<blocks_for(static_cast<size_t>(m.count) * C), kThreads>>>(
      dg, db, dout, inp, mean, rstd, N, C, m.count, m.param_stride);
  LENLAB_CHECK_LAUNCH("layernorm_backward_params_kernel");
}

}  // namespace lenlab::cuda
