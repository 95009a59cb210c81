// GELU (models/cpu/gelu.hpp) and the residual add: elementwise, grid-stride.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {
constexpr float kGeluK = 0.7978845608028654f, kGeluC = 0.044715f;

__global__ void gelu_forward_kernel(float* out, float* th, const float* inp, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float x = inp[i];
    const float t = tanhf(kGeluK * (x + kGeluC * x * x * x));
    if (th) th[i] = t;  // null when no backward follows
    out[i] = 0.5f * x * (1.0f + t);
  }
}
__global__ void gelu_backward_kernel(float* dinp, const float* inp, const float* th,
                                     const float* dout, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    const float x = inp[i], t = th[i];
    dinp[i] += dout[i] * (0.5f * (1.0f + t) +
                          0.5f * x * (1.0f - t * t) * kGeluK * (1.0f + 3.0f * kGeluC * x * x));
  }
}
__global__ void add_kernel(float* y, const float* x, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) y[i] += x[i];
}
}  // namespace

void gelu_forward(float* out, float* th, const float* inp, size_t n) {
  if (n == 0) return;
  gelu_forward_kernel<<<blocks_for(n), kThreads>>>(out, th, inp, n);
  LENLAB_CHECK_LAUNCH("gelu_forward_kernel");
}
void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, size_t n) {
  if (n == 0) return;
  gelu_backward_kernel<<<blocks_for(n), kThreads>>>(dinp, inp, th, dout, n);
  LENLAB_CHECK_LAUNCH("gelu_backward_kernel");
}
void add_inplace(float* y, const float* x, size_t n) {
  if (n == 0) return;
  add_kernel<<<blocks_for(n), kThreads>>>(y, x, n);
  LENLAB_CHECK_LAUNCH("add_kernel");
}

}  // namespace lenlab::cuda
