// The losses (models/cpu/loss.hpp), per model, in double like the CPU's. One block per model, so
// each model's sum is reduced in a fixed order inside one block: repeatable to the bit.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

constexpr int kMseThreads = 256;
constexpr int kCeWarps = 16;

// Block k: loss[k] = Σ_r w_r (pred_r − target_r)², dpred [R] = 2 w_r (pred_r − target_r).
__global__ void mse_loss_kernel(float* dpred, double* loss, const float* pred, const double* target,
                                const double* weight, int R) {
  __shared__ double shared[kMseThreads];
  const int k = blockIdx.x;
  double acc = 0;
  for (int r = threadIdx.x; r < R; r += blockDim.x) {
    const size_t i = static_cast<size_t>(k) * R + r;
    if (weight[i] == 0) {  // padding or a row left out: adds nothing, whatever its prediction
      dpred[i] = 0;
      continue;
    }
    const double diff = static_cast<double>(pred[i]) - target[i];
    acc += weight[i] * diff * diff;
    dpred[i] = static_cast<float>(2.0 * weight[i] * diff);
  }
  const double total = block_sum(acc, shared);
  if (threadIdx.x == 0) loss[k] = total;
}

// *total = the kCeWarps warps' acc (the same in every lane of a warp) summed in warp order: one
// fixed order, so repeatable to the bit. Called by every thread of the block.
__device__ void write_warp_total(double* total, double acc, int lane, int warp) {
  __shared__ double partial[kCeWarps];
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double sum = 0;
    for (int w = 0; w < kCeWarps; ++w) sum += partial[w];
    *total = sum;
  }
}

// Block k; warp w takes rows w, w + kCeWarps, ... (lanes over the V classes) and sums its rows'
// losses in row order; the warps' sums are then added in warp order. A row with label < 0 or
// weight 0 gets dlogits 0 and adds nothing.
__global__ void cross_entropy_kernel(float* dlogits, double* loss, const float* logits,
                                     const int* labels, const double* weight, int R, int V) {
  const int k = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  double acc = 0;  // the same in every lane of the warp
  for (int r = warp; r < R; r += kCeWarps) {
    const size_t i = static_cast<size_t>(k) * R + r;
    const float* z = logits + i * V;
    float* dz = dlogits + i * V;
    const int y = labels[i];
    const double w = weight[i];
    if (y < 0 || w == 0) {
      for (int v = lane; v < V; v += 32) dz[v] = 0;
      continue;
    }
    double mx = -INFINITY;
    for (int v = lane; v < V; v += 32) mx = fmax(mx, static_cast<double>(z[v]));
    mx = warp_max(mx);
    double norm = 0;
    for (int v = lane; v < V; v += 32) norm += exp(static_cast<double>(z[v]) - mx);
    norm = warp_sum(norm);
    // loss = log Σ_v e^{z_v} − z_y;  dloss/dz_v = softmax(z)_v − [v = y]
    acc += w * (mx + log(norm) - static_cast<double>(z[y]));
    for (int v = lane; v < V; v += 32) {
      const double p = exp(static_cast<double>(z[v]) - mx) / norm;
      dz[v] = static_cast<float>(w * (p - (v == y ? 1.0 : 0.0)));
    }
  }
  write_warp_total(loss + k, acc, lane, warp);
}

// Block k; warp w takes pairs w, w + kCeWarps, ... (lanes over the V classes), as the
// cross-entropy kernel does its rows; the pairs' losses are summed in pair order per warp, then in
// warp order. ADDS into the two rows' dlogits (no pair shares a row: PackedBatch checks).
__global__ void pair_alignment_kernel(float* dlogits, double* loss, const float* logits,
                                      const int* first, const int* second, const double* weight,
                                      const double* entropy_weight, int P, int R, int V) {
  const int k = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // log Σ_v e^{z_v} of one row, in every lane
  auto log_sum_exp = [&](const float* z) {
    double mx = -INFINITY;
    for (int v = lane; v < V; v += 32) mx = fmax(mx, static_cast<double>(z[v]));
    mx = warp_max(mx);
    double norm = 0;
    for (int v = lane; v < V; v += 32) norm += exp(static_cast<double>(z[v]) - mx);
    return mx + log(warp_sum(norm));
  };
  double acc = 0;  // the same in every lane of the warp
  for (int p = warp; p < P; p += kCeWarps) {
    const size_t i = static_cast<size_t>(k) * P + p;
    const double w = weight[i], e = entropy_weight[i];
    if (first[i] < 0 || second[i] < 0 || (w == 0 && e == 0)) continue;
    const size_t a = (static_cast<size_t>(k) * R + first[i]) * V;
    const size_t b = (static_cast<size_t>(k) * R + second[i]) * V;
    const double lse_a = log_sum_exp(logits + a), lse_b = log_sum_exp(logits + b);
    double kl_pq = 0, kl_qp = 0, h_p = 0, h_q = 0;
    for (int v = lane; v < V; v += 32) {
      const double lp = static_cast<double>(logits[a + v]) - lse_a;
      const double lq = static_cast<double>(logits[b + v]) - lse_b;
      const double pv = exp(lp), qv = exp(lq);
      kl_pq += pv * (lp - lq);
      kl_qp += qv * (lq - lp);
      h_p -= pv * lp;
      h_q -= qv * lq;
    }
    kl_pq = warp_sum(kl_pq);
    kl_qp = warp_sum(kl_qp);
    h_p = warp_sum(h_p);
    h_q = warp_sum(h_q);
    acc += w * (kl_pq + kl_qp) + e * (h_p + h_q);
    for (int v = lane; v < V; v += 32) {
      const double lp = static_cast<double>(logits[a + v]) - lse_a;
      const double lq = static_cast<double>(logits[b + v]) - lse_b;
      const double pv = exp(lp), qv = exp(lq);
      dlogits[a + v] +=
          static_cast<float>(w * (pv - qv + pv * (lp - lq - kl_pq)) - e * pv * (lp + h_p));
      dlogits[b + v] +=
          static_cast<float>(w * (qv - pv + qv * (lq - lp - kl_qp)) - e * qv * (lq + h_q));
    }
  }
  write_warp_total(loss + k, acc, lane, warp);
}

}  // namespace

void mse_loss(float* dpred, double* loss, const float* pred, const double* target,
              const double* weight, int R, Models m) {
  if (m.count == 0) return;
  mse_loss_kernel<<<m.count, kMseThreads>>>(dpred, loss, pred, target, weight, R);
  LENLAB_CHECK_LAUNCH("mse_loss_kernel");
}

void cross_entropy_loss(float* dlogits, double* loss, const float* logits, const int* labels,
                        const double* weight, int R, int V, Models m) {
  if (m.count == 0) return;
  cross_entropy_kernel<<<m.count, kCeWarps * 32>>>(dlogits, loss, logits, labels, weight, R, V);
  LENLAB_CHECK_LAUNCH("cross_entropy_kernel");
}

void pair_alignment_loss(float* dlogits, double* loss, const float* logits, const int* first,
                         const int* second, const double* weight, const double* entropy_weight,
                         int P, int R, int V, Models m) {
  if (m.count == 0) return;
  pair_alignment_kernel<<<m.count, kCeWarps * 32>>>(dlogits, loss, logits, first, second, weight,
                                                    entropy_weight, P, R, V);
  LENLAB_CHECK_LAUNCH("pair_alignment_kernel");
}

}  // namespace lenlab::cuda
