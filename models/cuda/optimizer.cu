// Global gradient norm and AdamW (models/cpu/optimizer.hpp), per model. The norm accumulates in
// double in a fixed order: repeatable to the bit.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

constexpr int kReduceThreads = 256;

// One block per model: norms[k] = √Σ g² over its n gradients (stride P).
__global__ void grad_norm_kernel(double* norms, const float* grads, size_t n, size_t P) {
  __shared__ double shared[kReduceThreads];
  const float* g = grads + blockIdx.x * P;
  double acc = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) acc += static_cast<double>(g[i]) * g[i];
  const double total = block_sum(acc, shared);
  if (threadIdx.x == 0) norms[blockIdx.x] = sqrt(total);
}

// One thread per (model, parameter).
__global__ void adamw_kernel(float* params, const float* grads, float* m1, float* m2,
                             const float* decay_mask, const AdamWStep* steps, const double* norms,
                             const double* losses, size_t n, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * n;
  for (size_t idx = global_thread(); idx < total; idx += grid_threads()) {
    const size_t k = idx / n, i = idx % n;
    const double norm = norms[k];
    if (!isfinite(norm) || (losses && !isfinite(losses[k]))) continue;
    const AdamWStep st = steps[k];
    const float scale = st.clip_norm > 0 && norm > st.clip_norm
                            ? static_cast<float>(st.clip_norm / (norm + 1e-6))
                            : 1.0f;
    // The settings come in double; the update runs in float, as the CPU's float instantiation.
    const float lr = static_cast<float>(st.lr), b1 = static_cast<float>(st.beta1),
                b2 = static_cast<float>(st.beta2), a1 = static_cast<float>(st.one_minus_beta1),
                a2 = static_cast<float>(st.one_minus_beta2), eps = static_cast<float>(st.eps),
                decay = static_cast<float>(st.decay), c1 = static_cast<float>(st.c1),
                c2 = static_cast<float>(st.c2);
    const size_t j = k * P + i;
    const float g = grads[j] * scale;
    float p = params[j];
    if (decay != 0) p -= decay * p * decay_mask[i];
    const float m = b1 * m1[j] + a1 * g;  // a1, a2: 1 − β subtracted in double (ops::AdamWStep)
    const float v = b2 * m2[j] + a2 * g * g;
    m1[j] = m;
    m2[j] = v;
    params[j] = p - lr * (m * c1) / (sqrtf(v * c2) + eps);
  }
}

}  // namespace

void grad_norm(double* norms, const float* grads, size_t n, Models m) {
  if (m.count == 0) return;
  grad_norm_kernel<<<m.count, kReduceThreads>>>(norms, grads, n,
                                                m.param_stride ? m.param_stride : n);
  LENLAB_CHECK_LAUNCH("grad_norm_kernel");
}

void adamw_step(float* params, const float* grads, float* m1, float* m2, const float* decay_mask,
                const AdamWStep* steps, const double* norms, const double* losses, size_t n,
                Models m) {
  if (n == 0 || m.count == 0) return;
  adamw_kernel<<<blocks_for(static_cast<size_t>(m.count) * n), kThreads>>>(
      params, grads, m1, m2, decay_mask, steps, norms, losses, n, m.count,
      m.param_stride ? m.param_stride : n);
  LENLAB_CHECK_LAUNCH("adamw_kernel");
}

}  // namespace lenlab::cuda
