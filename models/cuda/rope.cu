// Rotary position embedding (models/cpu/rope.hpp): a thread per element of the [K, N, 3d] rows,
// the angle taken from the row's position id.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

// Forward: out = R(pos)·inp on q and k, v copied, padding rows 0. Backward: out += R(pos)ᵀ·inp
// (a rotation by −pos·θ), v passed through, padding rows untouched. head_dim is even (RoPE
// rotates pairs).
template <bool kBackward>
__global__ void rope_kernel(float* out, const float* inp, const float* cos_t, const float* sin_t,
                            int d, int n_head, Seqs q, int K) {
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  const size_t total = static_cast<size_t>(K) * q.rows * C3;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t row = i / C3;  // k·N + r
    const int k = static_cast<int>(row / q.rows), r = static_cast<int>(row % q.rows);
    const int col = static_cast<int>(i % C3);
    if (r >= q.offsets[static_cast<size_t>(k) * (q.n_seq + 1) + q.n_seq]) {  // padding
      if (!kBackward) out[i] = 0;
      continue;
    }
    const float* x = inp + row * C3;
    if (col >= 2 * d) {  // v passes through
      if (kBackward)
        out[i] += x[col];
      else
        out[i] = x[col];
      continue;
    }
    const int within = (col % d) % hd, pair = within / 2;
    const int base = col - within % 2;  // the pair's first column
    const size_t angle = static_cast<size_t>(q.positions[row]) * half + pair;
    const float c = cos_t[angle], sn = sin_t[angle];
    const float x0 = x[base], x1 = x[base + 1];
    if (!kBackward)
      out[i] = within % 2 == 0 ? x0 * c - x1 * sn : x0 * sn + x1 * c;
    else
      out[i] += within % 2 == 0 ? x0 * c + x1 * sn : -x0 * sn + x1 * c;
  }
}

}  // namespace

void rope_forward(float* out, const float* inp, const float* cos, const float* sin, int d,
                  int n_head, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * q.rows * 3 * d;
  if (n == 0) return;
  rope_kernel<false><<<blocks_for(n), kThreads>>>(out, inp, cos, sin, d, n_head, q, m.count);
  LENLAB_CHECK_LAUNCH("rope_forward_kernel");
}

void rope_backward(float* dinp, const float* dout, const float* cos, const float* sin, int d,
                   int n_head, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * q.rows * 3 * d;
  if (n == 0) return;
  rope_kernel<true><<<blocks_for(n), kThreads>>>(dinp, dout, cos, sin, d, n_head, q, m.count);
  LENLAB_CHECK_LAUNCH("rope_backward_kernel");
}

}  // namespace lenlab::cuda
