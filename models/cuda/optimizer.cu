// Loss, global gradient norm and AdamW (models/loss.hpp, models/optimizer.hpp), per model.
// Reductions accumulate in double in a fixed order: repeatable to the bit.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

constexpr int kReduceThreads = 256;

// Fixed-order block sum of per-thread doubles (blockDim.x == kReduceThreads).
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int w = kReduceThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) shared[threadIdx.x] += shared[threadIdx.x + w];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

__global__ void mse_loss_kernel(const float* pred, const double* target, const double* weights,
                                const int* n_seq, int S, float* dpred, double* loss) {
  __shared__ double shared[kReduceThreads];
  const int k = blockIdx.x, n = n_seq[k];
  double acc = 0;
  for (int s = threadIdx.x; s < S; s += blockDim.x) {
    const size_t i = static_cast<size_t>(k) * S + s;
    if (s >= n) {
      dpred[i] = 0;
      continue;
    }
    const double w = weights ? weights[i] : 1.0 / n;
    const double diff = static_cast<double>(pred[i]) - target[i];
    acc += w * diff * diff;
    dpred[i] = static_cast<float>(2.0 * w * diff);
  }
  const double total = block_sum(acc, shared);
  if (threadIdx.x == 0) loss[k] = total;
}

__global__ void grad_norm_kernel(const float* grads, size_t n, double* norms, size_t P) {
  __shared__ double shared[kReduceThreads];
  const float* g = grads + blockIdx.x * P;
  double acc = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) acc += static_cast<double>(g[i]) * g[i];
  const double total = block_sum(acc, shared);
  if (threadIdx.x == 0) norms[blockIdx.x] = sqrt(total);
}

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
    const size_t j = k * P + i;
    const float g = grads[j] * scale;
    float p = params[j];
    if (st.decay != 0) p -= st.decay * p * decay_mask[i];
    const float m = st.beta1 * m1[j] + (1.0f - st.beta1) * g;
    const float v = st.beta2 * m2[j] + (1.0f - st.beta2) * g * g;
    m1[j] = m;
    m2[j] = v;
    params[j] = p - st.lr * (m * st.c1) / (sqrtf(v * st.c2) + st.eps);
  }
}

}  // namespace

void mse_loss(const float* pred, const double* target, const double* weights, const int* n_seq,
              int S, float* dpred, double* loss, int K) {
  if (K == 0) return;
  mse_loss_kernel<<<K, kReduceThreads>>>(pred, target, weights, n_seq, S, dpred, loss);
  LENLAB_CHECK_LAUNCH("mse_loss_kernel");
}

void grad_norm(const float* grads, size_t n, double* norms, Models m) {
  grad_norm_kernel<<<m.count, kReduceThreads>>>(grads, n, norms,
                                                m.param_stride ? m.param_stride : n);
  LENLAB_CHECK_LAUNCH("grad_norm_kernel");
}

void adamw_step(float* params, const float* grads, float* m1, float* m2, const float* decay_mask,
                const AdamWStep* steps, const double* norms, const double* losses, size_t n,
                Models m) {
  if (n == 0) return;
  adamw_kernel<<<blocks_for(static_cast<size_t>(m.count) * n), kThreads>>>(
      params, grads, m1, m2, decay_mask, steps, norms, losses, n, m.count,
      m.param_stride ? m.param_stride : n);
  LENLAB_CHECK_LAUNCH("adamw_kernel");
}

}  // namespace lenlab::cuda
