// The CUDA backend's operations (models/cuda/ops.hpp): kernels, and cuBLAS for the matrix products.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>

#include "models/cuda/check.hpp"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

namespace {

constexpr int kThreads = 256;

int blocks_for(size_t n, int threads = kThreads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 65535 * 16 ? (b == 0 ? 1 : b) : 65535 * 16);
}

cublasHandle_t blas() {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    LENLAB_CUBLAS_CHECK(cublasCreate(&h));
    return h;
  }();
  return handle;
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// ---- linear ----

// out [K·N, OC] += b (per model), rows of model k use b + k·P.
__global__ void add_bias_kernel(float* out, const float* b, int N, int OC, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * N * OC;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / (static_cast<size_t>(N) * OC);
    out[i] += b[k * P + i % OC];
  }
}

// db [OC] (per model) += Σ_rows dout: one thread per (model, column), rows in order.
__global__ void bias_grad_kernel(float* db, const float* dout, int N, int OC, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * OC;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / OC, c = i % OC;
    const float* d = dout + k * N * OC + c;
    float acc = 0;
    for (int r = 0; r < N; ++r) acc += d[static_cast<size_t>(r) * OC];
    db[k * P + c] += acc;
  }
}

}  // namespace

void linear_forward(float* out, const float* inp, const float* w, const float* b, int N, int C,
                    int OC, Models m) {
  if (N == 0) return;
  const float one = 1, zero = 0;
  // Row-major out[N,OC] = inp[N,C]·w[C,OC] is column-major outᵀ = wᵀ·inpᵀ.
  LENLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(blas(), CUBLAS_OP_N, CUBLAS_OP_N, OC, N, C, &one, w,
                                                OC, static_cast<long long>(m.param_stride), inp, C,
                                                static_cast<long long>(N) * C, &zero, out, OC,
                                                static_cast<long long>(N) * OC, m.count));
  if (b) {
    add_bias_kernel<<<blocks_for(static_cast<size_t>(m.count) * N * OC), kThreads>>>(
        out, b, N, OC, m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("add_bias_kernel");
  }
}

void linear_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, int N, int C, int OC, Models m) {
  if (N == 0) return;
  const float one = 1;
  if (dinp)  // dinp[N,C] += dout[N,OC]·wᵀ  ⇔  dinpᵀ += w·doutᵀ (column-major: (wᵀ)ᵀ)
    LENLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(blas(), CUBLAS_OP_T, CUBLAS_OP_N, C, N, OC, &one,
                                                  w, OC, static_cast<long long>(m.param_stride),
                                                  dout, OC, static_cast<long long>(N) * OC, &one,
                                                  dinp, C, static_cast<long long>(N) * C, m.count));
  if (dw)  // dw[C,OC] += inpᵀ·dout  ⇔  dwᵀ(OC×C) += doutᵀ(OC×N)·inp(N×C)
    LENLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(blas(), CUBLAS_OP_N, CUBLAS_OP_T, OC, C, N, &one,
                                                  dout, OC, static_cast<long long>(N) * OC, inp, C,
                                                  static_cast<long long>(N) * C, &one, dw, OC,
                                                  static_cast<long long>(m.param_stride), m.count));
  if (db) {
    bias_grad_kernel<<<blocks_for(static_cast<size_t>(m.count) * OC), kThreads>>>(
        db, dout, N, OC, m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("bias_grad_kernel");
  }
}

// ---- layer norm ----
namespace {

// One warp per row of K·N rows.
__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp,
                                         const float* g, const float* b, int N, int C, int K,
                                         size_t P) {
  const int lane = threadIdx.x % 32;
  const size_t rows = static_cast<size_t>(K) * N;
  for (size_t row = (blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += static_cast<size_t>(gridDim.x) * blockDim.x / 32) {
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
    if (lane == 0) {
      mean[row] = m;
      rstd[row] = r;
    }
  }
}

__global__ void layernorm_backward_input_kernel(float* dinp, const float* dout, const float* inp,
                                                const float* g, const float* mean,
                                                const float* rstd, int N, int C, int K, size_t P) {
  const int lane = threadIdx.x % 32;
  const size_t rows = static_cast<size_t>(K) * N;
  for (size_t row = (blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += static_cast<size_t>(gridDim.x) * blockDim.x / 32) {
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
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
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

// ---- elementwise ----
namespace {
constexpr float kGeluK = 0.7978845608028654f, kGeluC = 0.044715f;

__global__ void gelu_forward_kernel(float* out, float* th, const float* inp, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float x = inp[i];
    const float t = tanhf(kGeluK * (x + kGeluC * x * x * x));
    th[i] = t;
    out[i] = 0.5f * x * (1.0f + t);
  }
}
__global__ void gelu_backward_kernel(float* dinp, const float* inp, const float* th,
                                     const float* dout, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float x = inp[i], t = th[i];
    dinp[i] += dout[i] * (0.5f * (1.0f + t) +
                          0.5f * x * (1.0f - t * t) * kGeluK * (1.0f + 3.0f * kGeluC * x * x));
  }
}
__global__ void add_kernel(float* y, const float* x, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    y[i] += x[i];
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

// ---- embedding, gather ----
namespace {

// One block per (model, sequence slot); threads over (token, column). Padding rows are zeroed by
// the memset before.
__global__ void embedding_forward_kernel(float* out, const int* tokens, const int* offsets, int S,
                                         const float* wte, const float* wpe, int d, int N,
                                         size_t P) {
  const int k = blockIdx.x / S, s = blockIdx.x % S;
  const int* off = offsets + static_cast<size_t>(k) * (S + 1);
  const int begin = off[s], len = off[s + 1] - off[s];
  const float* e = wte + k * P;
  const float* p = wpe ? wpe + k * P : nullptr;
  for (int i = threadIdx.x; i < len * d; i += blockDim.x) {
    const int t = i / d, c = i % d;
    const size_t row = static_cast<size_t>(k) * N + begin + t;
    out[row * d + c] = e[static_cast<size_t>(tokens[row]) * d + c] +
                       (p ? p[static_cast<size_t>(t) * d + c] : 0.0f);
  }
}

// dwte: one thread per (model, token id, column) over the model's real rows in order.
__global__ void embedding_backward_wte_kernel(float* dwte, const float* dout, const int* tokens,
                                              const int* offsets, int S, int d, int N, int K,
                                              size_t P, int vocab) {
  const size_t total = static_cast<size_t>(K) * vocab * d;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / (static_cast<size_t>(vocab) * d);
    const int tok = static_cast<int>((i / d) % vocab), c = static_cast<int>(i % d);
    const int rows = offsets[k * (S + 1) + S];
    float acc = 0;
    for (int r = 0; r < rows; ++r) {
      const size_t row = k * N + r;
      if (tokens[row] == tok) acc += dout[row * d + c];
    }
    dwte[k * P + static_cast<size_t>(tok) * d + c] += acc;
  }
}

// dwpe: one thread per (model, position, column) over sequences in order.
__global__ void embedding_backward_wpe_kernel(float* dwpe, const float* dout, const int* offsets,
                                              int S, int d, int N, int K, size_t P, int positions) {
  const size_t total = static_cast<size_t>(K) * positions * d;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / (static_cast<size_t>(positions) * d);
    const int pos = static_cast<int>((i / d) % positions), c = static_cast<int>(i % d);
    const int* off = offsets + k * (S + 1);
    float acc = 0;
    bool used = false;  // positions no sequence reaches may lie past the table: never touched
    for (int s = 0; s < S; ++s)
      if (pos < off[s + 1] - off[s]) {
        acc += dout[(k * N + off[s] + pos) * d + c];
        used = true;
      }
    if (used) dwpe[k * P + static_cast<size_t>(pos) * d + c] += acc;
  }
}

__global__ void gather_last_forward_kernel(float* out, const float* inp, const int* offsets, int S,
                                           int d, int N, int K) {
  const size_t total = static_cast<size_t>(K) * S * d;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / (static_cast<size_t>(S) * d);
    const int s = static_cast<int>((i / d) % S), c = static_cast<int>(i % d);
    const int* off = offsets + k * (S + 1);
    out[i] = off[s + 1] > off[s] ? inp[(k * N + off[s + 1] - 1) * d + c] : 0.0f;
  }
}

__global__ void gather_last_backward_kernel(float* dinp, const float* dout, const int* offsets,
                                            int S, int d, int N, int K) {
  const size_t total = static_cast<size_t>(K) * S * d;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t k = i / (static_cast<size_t>(S) * d);
    const int s = static_cast<int>((i / d) % S), c = static_cast<int>(i % d);
    const int* off = offsets + k * (S + 1);
    if (off[s + 1] > off[s]) dinp[(k * N + off[s + 1] - 1) * d + c] += dout[i];
  }
}

}  // namespace

void embedding_forward(float* out, const int* tokens, const int* offsets, int n_seq,
                       const float* wte, const float* wpe, int d, SeqLayout lay, Models m) {
  const size_t n = static_cast<size_t>(m.count) * lay.rows * d;
  if (n == 0) return;
  LENLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float)));
  if (n_seq == 0) return;
  embedding_forward_kernel<<<m.count * n_seq, kThreads>>>(out, tokens, offsets, n_seq, wte, wpe, d,
                                                          lay.rows, m.param_stride);
  LENLAB_CHECK_LAUNCH("embedding_forward_kernel");
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens,
                        const int* offsets, int n_seq, int d, SeqLayout lay, Models m) {
  if (n_seq == 0 || lay.rows == 0) return;
  constexpr int kVocab = 4;
  embedding_backward_wte_kernel<<<blocks_for(static_cast<size_t>(m.count) * kVocab * d),
                                  kThreads>>>(dwte, dout, tokens, offsets, n_seq, d, lay.rows,
                                              m.count, m.param_stride, kVocab);
  LENLAB_CHECK_LAUNCH("embedding_backward_wte_kernel");
  if (dwpe) {
    // No sequence is longer than a model's rows: positions 0..rows-1 cover every one.
    embedding_backward_wpe_kernel<<<blocks_for(static_cast<size_t>(m.count) * lay.rows * d),
                                    kThreads>>>(dwpe, dout, offsets, n_seq, d, lay.rows, m.count,
                                                m.param_stride, lay.rows);
    LENLAB_CHECK_LAUNCH("embedding_backward_wpe_kernel");
  }
}

void gather_last_forward(float* out, const float* inp, const int* offsets, int n_seq, int d,
                         SeqLayout lay, Models m) {
  const size_t n = static_cast<size_t>(m.count) * n_seq * d;
  if (n == 0) return;
  gather_last_forward_kernel<<<blocks_for(n), kThreads>>>(out, inp, offsets, n_seq, d, lay.rows,
                                                          m.count);
  LENLAB_CHECK_LAUNCH("gather_last_forward_kernel");
}

void gather_last_backward(float* dinp, const float* dout, const int* offsets, int n_seq, int d,
                          SeqLayout lay, Models m) {
  const size_t n = static_cast<size_t>(m.count) * n_seq * d;
  if (n == 0) return;
  gather_last_backward_kernel<<<blocks_for(n), kThreads>>>(dinp, dout, offsets, n_seq, d, lay.rows,
                                                           m.count);
  LENLAB_CHECK_LAUNCH("gather_last_backward_kernel");
}

// ---- RoPE ----
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

// ---- attention ----
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

// ---- loss, norm, AdamW ----
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
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
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
