// VCL's random prefix (models/ops/prefix_noise.hpp): a thread per (model, feature), the CPU's
// arithmetic in the CPU's order; a second kernel zeroes padding rows.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"
#include "models/ops/prefix_noise.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

__global__ void prefix_noise_forward_kernel(float* out, const float* x, const float* noise,
                                            const int* codes, int d, Seqs q, int K) {
  const size_t total = static_cast<size_t>(K) * d;
  for (size_t i = global_thread(); i < total; i += grid_threads())
    ops::noise_feature(x, noise, codes, q, i / d, d, static_cast<int>(i % d)).forward(out);
}

__global__ void prefix_noise_backward_kernel(float* dx, const float* dout, const float* x,
                                             const float* noise, const int* codes, int d, Seqs q,
                                             int K) {
  const size_t total = static_cast<size_t>(K) * d;
  for (size_t i = global_thread(); i < total; i += grid_threads())
    ops::noise_feature(x, noise, codes, q, i / d, d, static_cast<int>(i % d)).backward(dx, dout);
}

__global__ void padding_zero_kernel(float* out, int d, Seqs q, int K) {
  const size_t total = static_cast<size_t>(K) * q.rows * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t row = i / d, k = row / q.rows;
    if (static_cast<int>(row % q.rows) >= q.offsets[k * (q.n_seq + 1) + q.n_seq]) out[i] = 0;
  }
}

}  // namespace

void prefix_noise_forward(float* out, const float* x, const float* noise, const int* codes, int d,
                          Seqs q, Models m) {
  const size_t rows = static_cast<size_t>(m.count) * q.rows * d;
  if (rows == 0) return;
  padding_zero_kernel<<<blocks_for(rows), kThreads>>>(out, d, q, m.count);
  LENLAB_CHECK_LAUNCH("padding_zero_kernel");
  const size_t n = static_cast<size_t>(m.count) * d;
  if (q.n_seq == 0) return;
  prefix_noise_forward_kernel<<<blocks_for(n), kThreads>>>(out, x, noise, codes, d, q, m.count);
  LENLAB_CHECK_LAUNCH("prefix_noise_forward_kernel");
}

void prefix_noise_backward(float* dx, const float* dout, const float* x, const float* noise,
                           const int* codes, int d, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * d;
  if (n == 0 || q.n_seq == 0) return;
  prefix_noise_backward_kernel<<<blocks_for(n), kThreads>>>(dx, dout, x, noise, codes, d, q,
                                                            m.count);
  LENLAB_CHECK_LAUNCH("prefix_noise_backward_kernel");
}

}  // namespace lenlab::cuda
