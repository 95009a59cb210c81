// VCL's random prefix (models/cpu/prefix_noise.hpp): a thread per (model, sequence, feature)
// computes μ and σ over the sequence's stats rows in the CPU's order, then writes (forward) or
// adds (backward) that feature's column of the sequence; a second kernel zeroes padding rows.
#include "models/cuda/check.hpp"
#include "models/cuda/kernel_util.cuh"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

using namespace detail;  // kernel_util.cuh
using ops::kNoiseRow;
using ops::kPrefixNoiseEps;
using ops::kStatsRow;

namespace {

// Rows [r0, r1) of sequence (k, s) among all K·N; false for a slot past the model's sequences.
__device__ void sequence_rows(const Seqs& q, size_t ks, size_t& r0, size_t& r1) {
  const size_t k = ks / q.n_seq, s = ks % q.n_seq;
  const int* off = q.offsets + k * (q.n_seq + 1);
  r0 = k * q.rows + off[s];
  r1 = k * q.rows + off[s + 1];
}

__device__ void stats(const float* x, const int* codes, size_t r0, size_t r1, int d, int c,
                      float& mean, float& sigma, int& n) {
  n = 0;
  float sum = 0;
  for (size_t r = r0; r < r1; ++r)
    if (codes[r] == kStatsRow) {
      sum += x[r * d + c];
      ++n;
    }
  if (n == 0) return;
  mean = sum / static_cast<float>(n);
  float var = 0;
  for (size_t r = r0; r < r1; ++r)
    if (codes[r] == kStatsRow) var += (x[r * d + c] - mean) * (x[r * d + c] - mean);
  sigma = sqrtf(var / static_cast<float>(n) + static_cast<float>(kPrefixNoiseEps));
}

__global__ void prefix_noise_forward_kernel(float* out, const float* x, const float* noise,
                                            const int* codes, int d, Seqs q, int K) {
  const size_t total = static_cast<size_t>(K) * q.n_seq * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const int c = static_cast<int>(i % d);
    size_t r0, r1;
    sequence_rows(q, i / d, r0, r1);
    float mean = 0, sigma = 0;
    int n = 0;
    stats(x, codes, r0, r1, d, c, mean, sigma, n);
    for (size_t r = r0; r < r1; ++r)
      out[r * d + c] =
          n > 0 && codes[r] == kNoiseRow ? mean + sigma * noise[r * d + c] : x[r * d + c];
  }
}

__global__ void padding_zero_kernel(float* out, int d, Seqs q, int K) {
  const size_t total = static_cast<size_t>(K) * q.rows * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const size_t row = i / d, k = row / q.rows;
    if (static_cast<int>(row % q.rows) >= q.offsets[k * (q.n_seq + 1) + q.n_seq]) out[i] = 0;
  }
}

__global__ void prefix_noise_backward_kernel(float* dx, const float* dout, const float* x,
                                             const float* noise, const int* codes, int d, Seqs q,
                                             int K) {
  const size_t total = static_cast<size_t>(K) * q.n_seq * d;
  for (size_t i = global_thread(); i < total; i += grid_threads()) {
    const int c = static_cast<int>(i % d);
    size_t r0, r1;
    sequence_rows(q, i / d, r0, r1);
    float mean = 0, sigma = 0;
    int n = 0;
    stats(x, codes, r0, r1, d, c, mean, sigma, n);
    float dmean = 0, dsigma = 0;
    for (size_t r = r0; r < r1 && n > 0; ++r)
      if (codes[r] == kNoiseRow) {
        dmean += dout[r * d + c];
        dsigma += dout[r * d + c] * noise[r * d + c];
      }
    for (size_t r = r0; r < r1; ++r) {
      if (n > 0 && codes[r] == kNoiseRow) continue;
      float g = dout[r * d + c];
      if (codes[r] == kStatsRow)
        g += (dmean + dsigma * (x[r * d + c] - mean) / sigma) / static_cast<float>(n);
      dx[r * d + c] += g;
    }
  }
}

}  // namespace

void prefix_noise_forward(float* out, const float* x, const float* noise, const int* codes, int d,
                          Seqs q, Models m) {
  const size_t rows = static_cast<size_t>(m.count) * q.rows * d;
  if (rows == 0) return;
  padding_zero_kernel<<<blocks_for(rows), kThreads>>>(out, d, q, m.count);
  LENLAB_CHECK_LAUNCH("padding_zero_kernel");
  const size_t n = static_cast<size_t>(m.count) * q.n_seq * d;
  if (n == 0) return;
  prefix_noise_forward_kernel<<<blocks_for(n), kThreads>>>(out, x, noise, codes, d, q, m.count);
  LENLAB_CHECK_LAUNCH("prefix_noise_forward_kernel");
}

void prefix_noise_backward(float* dx, const float* dout, const float* x, const float* noise,
                           const int* codes, int d, Seqs q, Models m) {
  const size_t n = static_cast<size_t>(m.count) * q.n_seq * d;
  if (n == 0) return;
  prefix_noise_backward_kernel<<<blocks_for(n), kThreads>>>(dx, dout, x, noise, codes, d, q,
                                                            m.count);
  LENLAB_CHECK_LAUNCH("prefix_noise_backward_kernel");
}

}  // namespace lenlab::cuda
