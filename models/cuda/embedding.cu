// Token (+ learned position) embedding and the row gather (models/cpu/embedding.hpp).
// Gradients of the tables: a thread per (model, table row, column) that walks the model's rows in
// ascending order and adds each matching row straight onto the stored value, the CPU's order; no
// atomics.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

namespace {

// One thread per element of out [K, N, d]; rows past the model's last offset are padding (0).
__global__ void embedding_forward_kernel(float* out, const int* tokens, const float* wte,
                                         float token_scale, const float* wpe, size_t wpe_stride,
                                         int d, Seqs q, int K, size_t P) {
  const size_t total = static_cast<size_t>(K) * q.rows * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t row = i / d;  // k·N + r
    const int k = static_cast<int>(row / q.rows), r = static_cast<int>(row % q.rows);
    const int c = static_cast<int>(i % d);
    if (r >= q.offsets[static_cast<size_t>(k) * (q.n_seq + 1) + q.n_seq]) {
      out[i] = 0;
      continue;
    }
    const float e = wte[k * P + static_cast<size_t>(tokens[row]) * d + c];
    // One rounding either way: with token_scale 1, fmaf(1, e, p) is e + p bit for bit.
    out[i] = wpe ? __fmaf_rn(token_scale, e,
                             wpe[k * wpe_stride + static_cast<size_t>(q.positions[row]) * d + c])
                 : token_scale * e;
  }
}

// table [n_rows, d] per model (+= stride P): entry (id, c) gains scale·dout[row, c] of every real
// row whose key (keys [K, N]: tokens or positions) is id, rows in ascending order.
__global__ void embedding_backward_kernel(float* table, float scale, const float* dout,
                                          const int* keys, int n_rows, int d, Seqs q, int K,
                                          size_t P) {
  const size_t total = static_cast<size_t>(K) * n_rows * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t k = i / (static_cast<size_t>(n_rows) * d);
    const int id = static_cast<int>((i / d) % n_rows), c = static_cast<int>(i % d);
    const int used = q.offsets[k * (q.n_seq + 1) + q.n_seq];
    const int* key = keys + k * q.rows;
    const float* dy = dout + k * q.rows * d + c;
    float* entry = table + k * P + static_cast<size_t>(id) * d + c;
    float acc = *entry;  // added onto the stored value row by row, as the CPU does
    for (int r = 0; r < used; ++r)
      if (key[r] == id) acc = __fmaf_rn(scale, dy[static_cast<size_t>(r) * d], acc);
    *entry = acc;
  }
}

// One thread per element of out [K, R, d].
__global__ void gather_rows_forward_kernel(float* out, const float* inp, const int* rows, int R,
                                           int N, int d, int K) {
  const size_t total = static_cast<size_t>(K) * R * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t ki = i / d;  // k·R + i
    const size_t k = ki / R;
    const int r = rows[ki];
    out[i] = r < 0 ? 0.0f : inp[(k * N + r) * d + i % d];
  }
}

// One thread per (model, gathered index i, column). Rows may be gathered more than once, so the
// first i that reads a row owns its column: it adds dout of that i and of every later i reading
// the same row, in order of i; the later ones do nothing. O(R) index reads per thread, all
// threads of a warp reading the same indices (broadcast).
__global__ void gather_rows_backward_kernel(float* dinp, const float* dout, const int* rows, int R,
                                            int N, int d, int K) {
  const size_t total = static_cast<size_t>(K) * R * d;
  for (size_t e = global_thread(); e < total; e += grid_threads()) {
    const size_t ki = e / d;  // k·R + i
    const size_t k = ki / R;
    const int i = static_cast<int>(ki % R), c = static_cast<int>(e % d);
    const int* rk = rows + k * R;
    const int r = rk[i];
    if (r < 0) continue;
    bool first = true;
    for (int j = 0; j < i && first; ++j) first = rk[j] != r;
    if (!first) continue;
    float* dx = dinp + (k * N + r) * d + c;
    float acc = *dx;
    for (int j = i; j < R; ++j)
      if (rk[j] == r) acc += dout[(k * R + j) * d + c];
    *dx = acc;
  }
}

}  // namespace

void embedding_forward(float* out, const int* tokens, const float* wte, float token_scale,
                       const float* wpe, size_t wpe_stride, int d, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * q.rows * d;
  if (n == 0) return;
  embedding_forward_kernel<<<blocks_for(n), kThreads>>>(out, tokens, wte, token_scale, wpe,
                                                        wpe_stride, d, q, m.count, m.param_stride);
  LENLAB_CHECK_LAUNCH("embedding_forward_kernel");
}

void embedding_backward(float* dwte, float token_scale, float* dwpe, const float* dout,
                        const int* tokens, int vocab, int n_positions, int d, Seqs q, Models m) {
  if (q.rows == 0 || d == 0 || m.count == 0) return;
  if (dwte && vocab > 0) {
    embedding_backward_kernel<<<blocks_for(static_cast<size_t>(m.count) * vocab * d), kThreads>>>(
        dwte, token_scale, dout, tokens, vocab, d, q, m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("embedding_backward_kernel (wte)");
  }
  if (dwpe && n_positions > 0) {
    embedding_backward_kernel<<<blocks_for(static_cast<size_t>(m.count) * n_positions * d),
                                kThreads>>>(dwpe, 1.0f, dout, q.positions, n_positions, d, q,
                                            m.count, m.param_stride);
    LENLAB_CHECK_LAUNCH("embedding_backward_kernel (wpe)");
  }
}

void gather_rows_forward(float* out, const float* inp, const int* rows, int R, int N, int d,
                         Models m) {
  const size_t n = static_cast<size_t>(m.count) * R * d;
  if (n == 0) return;
  gather_rows_forward_kernel<<<blocks_for(n), kThreads>>>(out, inp, rows, R, N, d, m.count);
  LENLAB_CHECK_LAUNCH("gather_rows_forward_kernel");
}

void gather_rows_backward(float* dinp, const float* dout, const int* rows, int R, int N, int d,
                          Models m) {
  const size_t n = static_cast<size_t>(m.count) * R * d;
  if (n == 0) return;
  gather_rows_backward_kernel<<<blocks_for(n), kThreads>>>(dinp, dout, rows, R, N, d, m.count);
  LENLAB_CHECK_LAUNCH("gather_rows_backward_kernel");
}

}  // namespace lenlab::cuda
