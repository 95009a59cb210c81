// Multi-head causal attention (models/cpu/attention.hpp), q, k, v read from global memory so any
// sequence length works. Training: a block per (model, sequence, head), a warp per query row,
// probabilities kept for the backward. Inference: a warp per (query, head), an online softmax
// over the keys, nothing kept. Logits as the CPU's detail::attend_row: masks, caps, the positional
// bias table, the per-sequence scale and RoPE by relative distance (ops::AttentionArgs).
#include <stdexcept>
#include <string>

#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

constexpr int kAttThreads = 128;
constexpr int kInferThreads = 128;
constexpr int kInferMaxHd =
    256;  // attention_infer keeps a head's output in kInferMaxHd/32 registers

// One head of one sequence of one model (the CPU's detail::SeqHead).
struct SeqHead {
  const float* qkv;  // [L, 3d] the sequence's first row
  const int* pos;    // [L] its positions
  size_t row0;       // its first row among all K·N
  int L, d, hd, h;
  float scale;        // scale_s / √hd
  float bias_scale;   // c_s: scale_s when the scale covers the bias too (AttentionArgs), else 1
  const float* bias;  // head h's bias table of this model (AttentionArgs::bias_table), or null
  __device__ const float* q(int i) const { return qkv + static_cast<size_t>(i) * 3 * d + h * hd; }
  __device__ const float* k(int j) const {
    return qkv + static_cast<size_t>(j) * 3 * d + d + h * hd;
  }
  __device__ const float* v(int j) const {
    return qkv + static_cast<size_t>(j) * 3 * d + 2 * d + h * hd;
  }
};

__device__ SeqHead seq_head(const float* qkv, const Seqs& q, const AttentionArgs& a, int k, int s,
                            int h, int d, int n_head) {
  const int* off = q.offsets + static_cast<size_t>(k) * (q.n_seq + 1);
  SeqHead sh;
  sh.row0 = static_cast<size_t>(k) * q.rows + off[s];
  sh.qkv = qkv + sh.row0 * 3 * d;
  sh.pos = q.positions + sh.row0;
  sh.L = off[s + 1] - off[s];
  sh.d = d;
  sh.hd = d / n_head;
  sh.h = h;
  const float seq_scale = a.seq_scale ? a.seq_scale[static_cast<size_t>(k) * q.n_seq + s] : 1.0f;
  sh.scale = seq_scale / sqrtf(static_cast<float>(sh.hd));
  sh.bias_scale = a.seq_scale_bias ? seq_scale : 1.0f;
  sh.bias = a.bias_table(k, h);
  return sh;
}

// δ_ij = pos_i − pos_j, capped at max_distance when that is > 0.
__device__ int distance(const SeqHead& sh, const AttentionArgs& a, int i, int j) {
  return a.window.capped(sh.pos[i] - sh.pos[j]);
}

// The logit s_ij of an admitted key: q·k (plain, channel order) or the rotated dot by δ_ij
// (Σ_m cos·(q0k0 + q1k1) + sin·(q0k1 − q1k0), pair order), times the scale, plus the bias c_s·b[δ].
// q may point anywhere (global or shared memory).
__device__ float logit(const float* q, const SeqHead& sh, const AttentionArgs& a, int i, int j) {
  const float* kj = sh.k(j);
  const int delta = distance(sh, a, i, j);
  float dot = 0;
  if (a.rope_cos) {
    const int half = sh.hd / 2;
    const float* cs = a.rope_cos + static_cast<size_t>(delta) * half;
    const float* sn = a.rope_sin + static_cast<size_t>(delta) * half;
    for (int m = 0; m < half; ++m) {
      const float q0 = q[2 * m], q1 = q[2 * m + 1], k0 = kj[2 * m], k1 = kj[2 * m + 1];
      dot += cs[m] * (q0 * k0 + q1 * k1) + sn[m] * (q0 * k1 - q1 * k0);
    }
  } else {
    for (int c = 0; c < sh.hd; ++c) dot += q[c] * kj[c];
  }
  // One fused multiply-add, written out: nvcc fused dot·scale + b so before the scale could cover
  // the bias, and c_s·b is b itself at c_s = 1, so that case keeps its rounding to the bit (a
  // compiler left to fuse dot·scale + c_s·b may fuse the other product instead).
  const float b = sh.bias ? sh.bias_scale * sh.bias[a.bias_row(sh.pos[i]) + delta] : 0.0f;
  return __fmaf_rn(dot, sh.scale, b);
}

// Block (k, s, h); warp per query row i: logits, softmax and out_i = Σ_j p_ij v_j. The row's
// probabilities are written over keys 0..L-1 (masked and j > i: 0).
__global__ void attention_forward_kernel(float* out, float* att, const float* qkv, int d,
                                         int n_head, AttentionArgs a, ProbLayout prob, Seqs q) {
  const int S = q.n_seq;
  const int h = blockIdx.x % n_head, s = (blockIdx.x / n_head) % S, k = blockIdx.x / (n_head * S);
  const SeqHead sh = seq_head(qkv, q, a, k, s, h, d, n_head);
  const int L = sh.L, hd = sh.hd;
  if (L == 0) return;
  float* P = att + k * prob.stride + prob.offsets[static_cast<size_t>(k) * (S + 1) + s] +
             static_cast<size_t>(h) * L * L;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int i = warp; i < L; i += warps) {
    float* p = P + static_cast<size_t>(i) * L;
    if (a.row_read && !a.row_read[sh.row0 + i]) {  // nothing reads it: output and p stay 0
      for (int j = lane; j < L; j += 32) p[j] = 0;
      continue;
    }
    const float* qi = sh.q(i);
    float mx = -INFINITY;  // key i is always admitted, so the row's maximum is finite
    for (int j = lane; j <= i; j += 32) {
      const float l = a.admits(i, j) ? logit(qi, sh, a, i, j) : -INFINITY;
      p[j] = l;
      mx = fmaxf(mx, l);
    }
    mx = warp_max(mx);
    float sum = 0;
    for (int j = lane; j <= i; j += 32) {
      const float e = expf(p[j] - mx);  // masked: exp(−∞) = 0
      p[j] = e;
      sum += e;
    }
    const float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j <= i; j += 32) p[j] *= inv;
    for (int j = i + 1 + lane; j < L; j += 32) p[j] = 0;
    __syncwarp();  // every lane reads every p_j below
    float* o = out + (sh.row0 + i) * d + h * hd;
    for (int c = lane; c < hd; c += 32) {
      float acc = 0;
      for (int j = 0; j <= i; ++j) acc += p[j] * sh.v(j)[c];
      o[c] = acc;
    }
  }
}

// Block (k, s, h). Phase 1, a warp per query row i: ds_ij = p_ij (dp_ij − Σ_l p_il dp_il)·scale
// with dp_ij = do_i·v_j, into scratch (laid out as att); with a.dbias, the unscaled ds_ij is also
// added into the bias's gradient at (h, row of pos_i, δ_ij) (atomically: sequences share entries).
// Phase 2, after a barrier, a thread per (row t, channel c) owns dq, dk, dv of that entry and sums
// in a fixed order:
//   dq_t = Σ_{j ≤ t} ds_tj ∂s_tj/∂q_t,  dk_t = Σ_{i ≥ t} ds_it ∂s_it/∂k_t,  dv_t = Σ_{i ≥ t} p_it
//   do_i
// where ∂s/∂q = k and ∂s/∂k = q, or their rotations by δ when RoPE is applied here.
__global__ void attention_backward_kernel(float* dqkv, float* scratch, const float* dout,
                                          const float* qkv, const float* att, int d, int n_head,
                                          AttentionArgs a, ProbLayout prob, Seqs q) {
  const int S = q.n_seq;
  const int h = blockIdx.x % n_head, s = (blockIdx.x / n_head) % S, k = blockIdx.x / (n_head * S);
  const SeqHead sh = seq_head(qkv, q, a, k, s, h, d, n_head);
  const int L = sh.L, hd = sh.hd, half = hd / 2, C3 = 3 * d;
  if (L == 0) return;
  const size_t block = k * prob.stride + prob.offsets[static_cast<size_t>(k) * (S + 1) + s] +
                       static_cast<size_t>(h) * L * L;
  const float* P = att + block;
  float* DS = scratch + block;
  const float* dbase = dout + sh.row0 * d + h * hd;  // do_i = dbase + i·d
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int i = warp; i < L; i += warps) {
    const float* p = P + static_cast<size_t>(i) * L;
    const float* dO = dbase + static_cast<size_t>(i) * d;
    float* ds = DS + static_cast<size_t>(i) * L;
    bool skip = a.row_read && !a.row_read[sh.row0 + i];            // p_i = 0: ds_i = 0
    if (!skip && a.row_detached && a.row_detached[sh.row0 + i]) {  // and do_i = 0: ds_i = 0
      bool nonzero = false;
      for (int c = lane; c < hd; c += 32) nonzero = nonzero || dO[c] != 0.0f;
      skip = !__any_sync(0xffffffffu, nonzero);
    }
    if (skip) {
      for (int j = lane; j <= i; j += 32) ds[j] = 0;
      continue;
    }
    float dot = 0;
    for (int j = lane; j <= i; j += 32) {
      const float* v = sh.v(j);
      float dp = 0;
      for (int c = 0; c < hd; ++c) dp += dO[c] * v[c];
      ds[j] = dp;
      dot += p[j] * dp;
    }
    dot = warp_sum(dot);
    float* db = a.dbias
                    ? a.dbias + static_cast<size_t>(k) * a.bias_stride +
                          static_cast<size_t>(h) * a.bias_rows * a.bias_cols + a.bias_row(sh.pos[i])
                    : nullptr;
    for (int j = lane; j <= i; j += 32) {
      const float ds_logit = p[j] * (ds[j] - dot);
      if (db && a.admits(i, j)) atomicAdd(db + distance(sh, a, i, j), ds_logit * sh.bias_scale);
      ds[j] = ds_logit * sh.scale;
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < L * hd; e += blockDim.x) {
    const int t = e / hd, c = e % hd;
    float* g = dqkv + (sh.row0 + t) * C3 + h * hd + c;
    float dq = g[0], dk = g[d], dv = g[2 * d];  // added onto, in the CPU's order of keys / queries
    // A detached row's key and value pass no gradient: its dk, dv stay as they were.
    const bool keep_kv = !(a.row_detached && a.row_detached[sh.row0 + t]);
    if (!a.rope_cos) {
      for (int j = 0; j <= t; ++j) dq += DS[static_cast<size_t>(t) * L + j] * sh.k(j)[c];
      for (int i = t; i < L && keep_kv; ++i) dk += DS[static_cast<size_t>(i) * L + t] * sh.q(i)[c];
    } else if (c / 2 < half) {  // an odd head_dim's last channel is not rotated: no gradient
      const int m = c / 2, c0 = 2 * m;
      const bool odd = c % 2 == 1;
      for (int j = 0; j <= t; ++j) {  // s_tj = scale·rotated_dot(q_t, k_j, δ_tj)
        if (!a.admits(t, j)) continue;
        const size_t row = static_cast<size_t>(distance(sh, a, t, j)) * half + m;
        const float cs = a.rope_cos[row], sn = a.rope_sin[row];
        const float ds = DS[static_cast<size_t>(t) * L + j];
        const float k0 = sh.k(j)[c0], k1 = sh.k(j)[c0 + 1];
        dq += ds * (odd ? cs * k1 - sn * k0 : cs * k0 + sn * k1);
      }
      for (int i = t; i < L && keep_kv; ++i) {  // s_it = scale·rotated_dot(q_i, k_t, δ_it)
        if (!a.admits(i, t)) continue;
        const size_t row = static_cast<size_t>(distance(sh, a, i, t)) * half + m;
        const float cs = a.rope_cos[row], sn = a.rope_sin[row];
        const float ds = DS[static_cast<size_t>(i) * L + t];
        const float q0 = sh.q(i)[c0], q1 = sh.q(i)[c0 + 1];
        dk += ds * (odd ? cs * q1 + sn * q0 : cs * q0 - sn * q1);
      }
    }
    for (int i = t; i < L && keep_kv; ++i)
      dv += P[static_cast<size_t>(i) * L + t] * dbase[static_cast<size_t>(i) * d + c];
    g[0] = dq;
    g[d] = dk;
    g[2 * d] = dv;
  }
}

// A warp per (model, query, head), item = (k·Q + query)·n_head + h. Lanes take the keys 32 at a
// time (lane l: key j0 + l), the warp keeps the running maximum and sum of exp(logit − max), and
// lane l accumulates output channels l, l + 32, ... in registers, rescaled when the maximum
// grows. The query vector sits in shared memory, one slice per warp.
__global__ void attention_infer_kernel(float* out, const float* qkv, const int* query_rows, int Q,
                                       int d, int n_head, AttentionArgs a, Seqs q, int K) {
  constexpr int kChunks = kInferMaxHd / 32;
  __shared__ float q_shared[kInferThreads / 32][kInferMaxHd];
  const int lane = threadIdx.x % 32, hd = d / n_head, S = q.n_seq;
  float* qs = q_shared[threadIdx.x / 32];
  const size_t items = static_cast<size_t>(K) * Q * n_head;
  for (size_t item = global_thread() / 32; item < items; item += grid_threads() / 32) {
    const size_t kq = item / n_head;  // k·Q + query
    const int h = static_cast<int>(item % n_head);
    const int k = static_cast<int>(kq / Q), qi = static_cast<int>(kq % Q);
    float* o = out + kq * d + h * hd;
    const int r = query_rows ? query_rows[kq] : qi;
    const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
    float* st = a.row_stats ? a.row_stats + item * 2 : nullptr;  // [K, Q, n_head, 2]
    if (r < 0 || r < off[0] || r >= off[S]) {                    // padding
      for (int c = lane; c < hd; c += 32) o[c] = 0;
      if (st && lane < 2) st[lane] = 0;
      continue;
    }
    // The sequence holding row r: the last s with off[s] ≤ r (upper bound over off[0..S], − 1),
    // which skips empty slots (equal offsets).
    int lo = 0, hi = S + 1;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (off[mid] <= r)
        lo = mid + 1;
      else
        hi = mid;
    }
    const int s = lo - 1;
    const SeqHead sh = seq_head(qkv, q, a, k, s, h, d, n_head);
    const int i = r - off[s];
    __syncwarp();  // every lane is done with the previous item's query
    for (int c = lane; c < hd; c += 32) qs[c] = sh.q(i)[c];
    __syncwarp();
    float acc[kChunks];
#pragma unroll
    for (int t = 0; t < kChunks; ++t) acc[t] = 0;
    float run_max = -INFINITY, run_sum = 0;  // the same in every lane
    // Σ_j e_j·(l_j − run_max), rescaled with run_sum: the entropy is
    // log(run_sum) − run_dot / run_sum, the largest probability 1 / run_sum.
    float run_dot = 0;
    for (int j0 = 0; j0 <= i; j0 += 32) {
      const int j = j0 + lane;
      const float l = j <= i && a.admits(i, j) ? logit(qs, sh, a, i, j) : -INFINITY;
      const float chunk_max = warp_max(l);
      if (chunk_max == -INFINITY) continue;  // every key of the chunk masked
      const float new_max = fmaxf(run_max, chunk_max);
      const float corr = expf(run_max - new_max);  // 0 before the first admitted key
      const float e = expf(l - new_max);           // masked: 0
      if (st) {
        // Old terms: e·corr·(l − new_max) = corr·(e·(l − run_max) + e·(run_max − new_max)).
        const float shift = run_sum > 0 ? run_sum * (run_max - new_max) : 0.0f;
        run_dot = corr * (run_dot + shift) + warp_sum(e > 0 ? e * (l - new_max) : 0.0f);
      }
      run_sum = run_sum * corr + warp_sum(e);
#pragma unroll
      for (int t = 0; t < kChunks; ++t) acc[t] *= corr;
      const int n = min(32, i - j0 + 1);
      for (int jj = 0; jj < n; ++jj) {
        const float ej = __shfl_sync(0xffffffffu, e, jj);
        if (ej == 0) continue;  // a masked key (the same in every lane)
        const float* v = sh.v(j0 + jj);
#pragma unroll
        for (int t = 0; t < kChunks; ++t)
          if (lane + 32 * t < hd) acc[t] += ej * v[lane + 32 * t];
      }
      run_max = new_max;
    }
    const float inv = 1.0f / run_sum;  // key i is always admitted: run_sum ≥ 1
    if (st && lane == 0) {
      st[0] = logf(run_sum) - run_dot * inv;
      st[1] = inv;
    }
#pragma unroll
    for (int t = 0; t < kChunks; ++t)
      if (lane + 32 * t < hd) o[lane + 32 * t] = acc[t] * inv;
  }
}

}  // namespace

void attention_forward(float* out, float* att, const float* qkv, int d, int n_head,
                       const AttentionArgs& a, ProbLayout prob, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * q.rows * d;
  if (n == 0) return;
  LENLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float)));  // padding rows stay 0
  if (q.n_seq == 0) return;
  attention_forward_kernel<<<m.count * q.n_seq * n_head, kAttThreads>>>(out, att, qkv, d, n_head, a,
                                                                        prob, q);
  LENLAB_CHECK_LAUNCH("attention_forward_kernel");
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                        const float* att, int d, int n_head, const AttentionArgs& a,
                        ProbLayout prob, Seqs q, Models m) {
  if (q.n_seq == 0 || q.rows == 0 || m.count == 0) return;
  attention_backward_kernel<<<m.count * q.n_seq * n_head, kAttThreads>>>(
      dqkv, scratch, dout, qkv, att, d, n_head, a, prob, q);
  LENLAB_CHECK_LAUNCH("attention_backward_kernel");
}

void attention_infer(float* out, const float* qkv, const int* query_rows, int Q, int d, int n_head,
                     const AttentionArgs& a, Seqs q, Models m) {
  const size_t items = static_cast<size_t>(m.count) * Q * n_head;
  if (items == 0 || d == 0) return;
  const int hd = d / n_head;
  if (hd > kInferMaxHd)
    throw std::invalid_argument("lenlab cuda::attention_infer: head_dim " + std::to_string(hd) +
                                " is larger than the kernel's limit of " +
                                std::to_string(kInferMaxHd));
  attention_infer_kernel<<<blocks_for(items * 32, kInferThreads), kInferThreads>>>(
      out, qkv, query_rows, Q, d, n_head, a, q, m.count);
  LENLAB_CHECK_LAUNCH("attention_infer_kernel");
}

}  // namespace lenlab::cuda
