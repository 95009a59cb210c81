// Causal multi-head attention (models/cpu/attention.hpp): a block per (model, sequence, head),
// a warp per query row; q, k, v read from global memory, so any sequence length works.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

constexpr int kAttThreads = 128;

// One block per (model, sequence slot, head); a warp per query row.
__global__ void attention_forward_kernel(float* out, float* att, const float* qkv,
                                         const int* offsets, const int64_t* att_offsets, int S,
                                         int d, int n_head, const float* slopes, float scale, int N,
                                         size_t att_stride) {
  const int h = blockIdx.x % n_head, s = (blockIdx.x / n_head) % S, k = blockIdx.x / (n_head * S);
  const int* off = offsets + static_cast<size_t>(k) * (S + 1);
  const int begin = off[s], L = off[s + 1] - off[s];
  if (L == 0) return;
  const int hd = d / n_head, C3 = 3 * d;
  const float slope = slopes ? slopes[h] : 0.0f;
  float* P = att + static_cast<size_t>(k) * att_stride +
             att_offsets[static_cast<size_t>(k) * (S + 1) + s] + static_cast<size_t>(h) * L * L;
  const float* base = qkv + (static_cast<size_t>(k) * N + begin) * C3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int i = warp; i < L; i += warps) {
    const float* q = base + static_cast<size_t>(i) * C3 + h * hd;
    float* p = P + static_cast<size_t>(i) * L;
    float mx = -INFINITY;
    for (int j = lane; j <= i; j += 32) {
      const float* kk = base + static_cast<size_t>(j) * C3 + d + h * hd;
      float dot = 0;
      for (int c = 0; c < hd; ++c) dot += q[c] * kk[c];
      const float logit = dot * scale - slope * static_cast<float>(i - j);
      p[j] = logit;
      mx = fmaxf(mx, logit);
    }
    mx = warp_max(mx);
    float sum = 0;
    for (int j = lane; j <= i; j += 32) {
      const float e = expf(p[j] - mx);
      p[j] = e;
      sum += e;
    }
    const float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j <= i; j += 32) p[j] *= inv;
    for (int j = i + 1 + lane; j < L; j += 32) p[j] = 0;
    __syncwarp();
    float* o = out + (static_cast<size_t>(k) * N + begin + i) * d + h * hd;
    for (int c = lane; c < hd; c += 32) {
      float acc = 0;
      for (int j = 0; j <= i; ++j)
        acc += p[j] * base[static_cast<size_t>(j) * C3 + 2 * d + h * hd + c];
      o[c] = acc;
    }
  }
}

// Phase 1 per query row (a warp each): ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik)·scale into scratch.
// Phase 2 (after a barrier) per output element, each owned by one thread: dq, dk, dv.
__global__ void attention_backward_kernel(float* dqkv, const float* dout, const float* qkv,
                                          const float* att, const int* offsets,
                                          const int64_t* att_offsets, int S, int d, int n_head,
                                          float scale, float* scratch, int N, size_t att_stride) {
  const int h = blockIdx.x % n_head, s = (blockIdx.x / n_head) % S, k = blockIdx.x / (n_head * S);
  const int* off = offsets + static_cast<size_t>(k) * (S + 1);
  const int begin = off[s], L = off[s + 1] - off[s];
  if (L == 0) return;
  const int hd = d / n_head, C3 = 3 * d;
  const size_t block = static_cast<size_t>(k) * att_stride +
                       att_offsets[static_cast<size_t>(k) * (S + 1) + s] +
                       static_cast<size_t>(h) * L * L;
  const float* P = att + block;
  float* DS = scratch + block;
  const size_t row0 = static_cast<size_t>(k) * N + begin;
  const float* base = qkv + row0 * C3;
  const float* dbase = dout + row0 * d;
  float* gbase = dqkv + row0 * C3;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int i = warp; i < L; i += warps) {
    const float* p = P + static_cast<size_t>(i) * L;
    const float* dO = dbase + static_cast<size_t>(i) * d + h * hd;
    float* ds = DS + static_cast<size_t>(i) * L;
    float dot = 0;
    for (int j = lane; j <= i; j += 32) {
      const float* v = base + static_cast<size_t>(j) * C3 + 2 * d + h * hd;
      float dp = 0;
      for (int c = 0; c < hd; ++c) dp += dO[c] * v[c];
      ds[j] = dp;
      dot += p[j] * dp;
    }
    dot = warp_sum(dot);
    for (int j = lane; j <= i; j += 32) ds[j] = p[j] * (ds[j] - dot) * scale;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < L * hd; e += blockDim.x) {
    const int t = e / hd, c = e % hd;
    // dq_t = Σ_{j ≤ t} ds_tj k_j
    float dq = 0;
    for (int j = 0; j <= t; ++j)
      dq += DS[static_cast<size_t>(t) * L + j] * base[static_cast<size_t>(j) * C3 + d + h * hd + c];
    // dk_t = Σ_{i ≥ t} ds_it q_i ;  dv_t = Σ_{i ≥ t} p_it do_i
    float dk = 0, dv = 0;
    for (int i = t; i < L; ++i) {
      dk += DS[static_cast<size_t>(i) * L + t] * base[static_cast<size_t>(i) * C3 + h * hd + c];
      dv += P[static_cast<size_t>(i) * L + t] * dbase[static_cast<size_t>(i) * d + h * hd + c];
    }
    float* g = gbase + static_cast<size_t>(t) * C3 + h * hd + c;
    g[0] += dq;
    g[d] += dk;
    g[2 * d] += dv;
  }
}

}  // namespace

void attention_forward(float* out, float* att, const float* qkv, const int* offsets,
                       const int64_t* att_offsets, int n_seq, int d, int n_head,
                       const AttentionOptions& opt, SeqLayout lay, Models m) {
  const size_t n = static_cast<size_t>(m.count) * lay.rows * d;
  if (n == 0) return;
  LENLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float)));
  if (n_seq == 0) return;
  const float scale = opt.logit_scale / sqrtf(static_cast<float>(d / n_head));
  attention_forward_kernel<<<m.count * n_seq * n_head, kAttThreads>>>(
      out, att, qkv, offsets, att_offsets, n_seq, d, n_head, opt.alibi_slopes, scale, lay.rows,
      lay.att_stride);
  LENLAB_CHECK_LAUNCH("attention_forward_kernel");
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att,
                        const int* offsets, const int64_t* att_offsets, int n_seq, int d,
                        int n_head, const AttentionOptions& opt, float* scratch, SeqLayout lay,
                        Models m) {
  if (n_seq == 0 || lay.rows == 0) return;
  const float scale = opt.logit_scale / sqrtf(static_cast<float>(d / n_head));
  attention_backward_kernel<<<m.count * n_seq * n_head, kAttThreads>>>(
      dqkv, dout, qkv, att, offsets, att_offsets, n_seq, d, n_head, scale, scratch, lay.rows,
      lay.att_stride);
  LENLAB_CHECK_LAUNCH("attention_backward_kernel");
}

}  // namespace lenlab::cuda
