// Token (+ learned position) embedding and the EOS gather (models/cpu/embedding.hpp).
// Gradients of the tables: a thread per (model, table row, column), summing in order, no atomics.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh

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
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
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
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
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
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t k = i / (static_cast<size_t>(S) * d);
    const int s = static_cast<int>((i / d) % S), c = static_cast<int>(i % d);
    const int* off = offsets + k * (S + 1);
    out[i] = off[s + 1] > off[s] ? inp[(k * N + off[s + 1] - 1) * d + c] : 0.0f;
  }
}

__global__ void gather_last_backward_kernel(float* dinp, const float* dout, const int* offsets,
                                            int S, int d, int N, int K) {
  const size_t total = static_cast<size_t>(K) * S * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
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

}  // namespace lenlab::cuda
