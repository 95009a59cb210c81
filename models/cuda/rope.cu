// Rotary position embedding (models/cpu/rope.hpp): a block per (model, sequence).
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

// One block per (model, sequence slot); threads over (token, column of the 3d row).
template <bool kBackward>
__global__ void rope_kernel(float* out, const float* inp, const int* offsets, int S, int d,
                            int n_head, const float* cos_t, const float* sin_t, int N) {
  const int k = blockIdx.x / S, s = blockIdx.x % S;
  const int* off = offsets + static_cast<size_t>(k) * (S + 1);
  const int begin = off[s], len = off[s + 1] - off[s];
  const int hd = d / n_head, half = hd / 2, C3 = 3 * d;
  for (int i = threadIdx.x; i < len * C3; i += blockDim.x) {
    const int t = i / C3, col = i % C3;
    const size_t row = static_cast<size_t>(k) * N + begin + t;
    const float* x = inp + row * C3;
    float* y = out + row * C3;
    if (col >= 2 * d) {  // v passes through
      if (kBackward)
        y[col] += x[col];
      else
        y[col] = x[col];
      continue;
    }
    const int within = col % hd, pair = within / 2;
    const int base = col - within % 2;  // the pair's first column
    const float c = cos_t[static_cast<size_t>(t) * half + pair];
    const float sn = sin_t[static_cast<size_t>(t) * half + pair];
    const float x0 = x[base], x1 = x[base + 1];
    if (!kBackward) {
      y[col] = within % 2 == 0 ? x0 * c - x1 * sn : x0 * sn + x1 * c;
    } else {  // the transpose: rotation by −angle
      y[col] += within % 2 == 0 ? x0 * c + x1 * sn : -x0 * sn + x1 * c;
    }
  }
}

}  // namespace

void rope_forward(float* out, const float* inp, const int* offsets, int n_seq, int d, int n_head,
                  const float* cos, const float* sin, SeqLayout lay, Models m) {
  const size_t n = static_cast<size_t>(m.count) * lay.rows * 3 * d;
  if (n == 0) return;
  LENLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float)));
  if (n_seq == 0) return;
  rope_kernel<false>
      <<<m.count * n_seq, kThreads>>>(out, inp, offsets, n_seq, d, n_head, cos, sin, lay.rows);
  LENLAB_CHECK_LAUNCH("rope_forward_kernel");
}

void rope_backward(float* dinp, const float* dout, const int* offsets, int n_seq, int d, int n_head,
                   const float* cos, const float* sin, SeqLayout lay, Models m) {
  if (n_seq == 0 || lay.rows == 0) return;
  rope_kernel<true>
      <<<m.count * n_seq, kThreads>>>(dinp, dout, offsets, n_seq, d, n_head, cos, sin, lay.rows);
  LENLAB_CHECK_LAUNCH("rope_backward_kernel");
}

}  // namespace lenlab::cuda
