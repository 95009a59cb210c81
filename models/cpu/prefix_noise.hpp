#pragma once
// VCL's random prefix (train/vcl.hpp; paper 004, App. H.1): a sequence's first rows replaced by
// Gaussian noise with the mean and variance of its later rows, per feature. Row codes [K, N]
// (ops::PrefixNoiseCode): kNoiseRow rows are replaced, kStatsRow rows give the statistics, others
// pass through. Per
// sequence s and feature c, over its n stats rows:
//   μ_c = Σ x_ic / n,  σ_c = sqrt(Σ (x_ic − μ_c)² / n + ε),  out_rc = μ_c + σ_c·noise_rc
// (out = x elsewhere). A sequence without stats rows passes through whole. The backward is the
// derivative of that, through μ and σ, so it is checked by finite differences as any op.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "models/cpu/embedding.hpp"
#include "models/ops/args.hpp"

namespace lenlab::cpu {

using ops::kNoiseRow;
using ops::kPrefixNoiseEps;
using ops::kStatsRow;

namespace detail {

// Feature c's μ and σ over sequence rows [r0, r1) of model k's block x [N, d] with `codes`; n = 0:
// no stats rows.
template <class T>
void noise_stats(const T* x, const int* codes, size_t r0, size_t r1, int d, int c, T& mean,
                 T& sigma, int& n) {
  n = 0;
  T sum = 0;
  for (size_t r = r0; r < r1; ++r)
    if (codes[r] == kStatsRow) {
      sum += x[r * d + c];
      ++n;
    }
  if (n == 0) return;
  mean = sum / static_cast<T>(n);
  T var = 0;
  for (size_t r = r0; r < r1; ++r)
    if (codes[r] == kStatsRow) var += (x[r * d + c] - mean) * (x[r * d + c] - mean);
  sigma = std::sqrt(var / static_cast<T>(n) + static_cast<T>(kPrefixNoiseEps));
}

}  // namespace detail

// out [K, N, d] from x [K, N, d], noise [K, N, d] and codes [K, N]; padding rows 0.
template <class T>
void prefix_noise_forward(T* out, const T* x, const T* noise, const int* codes, int d, ops::Seqs q,
                          ops::Models m = {}) {
  const int S = q.n_seq;
#pragma omp parallel for schedule(static)
  for (int ks = 0; ks < m.count * S; ++ks) {
    const int k = ks / S, s = ks % S;
    const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
    const size_t r0 = static_cast<size_t>(k) * q.rows + off[s], r1 = r0 + (off[s + 1] - off[s]);
    for (int c = 0; c < d; ++c) {
      T mean = 0, sigma = 0;
      int n = 0;
      detail::noise_stats(x, codes, r0, r1, d, c, mean, sigma, n);
      for (size_t r = r0; r < r1; ++r)
        out[r * d + c] =
            n > 0 && codes[r] == kNoiseRow ? mean + sigma * noise[r * d + c] : x[r * d + c];
    }
  }
  for (int k = 0; k < m.count; ++k)  // padding rows
    for (size_t r = used_rows(q, k); r < static_cast<size_t>(q.rows); ++r)
      std::fill_n(out + (static_cast<size_t>(k) * q.rows + r) * d, d, T(0));
}

// Adds dLoss/dx into dx [K, N, d], from dout [K, N, d] and the forward's x, noise and codes:
//   dμ_c = Σ_noise dout_rc,  dσ_c = Σ_noise dout_rc·noise_rc,
//   dx_ic += dout_ic (rows not replaced) + dμ_c/n + dσ_c·(x_ic − μ_c)/(n·σ_c) (stats rows).
template <class T>
void prefix_noise_backward(T* dx, const T* dout, const T* x, const T* noise, const int* codes,
                           int d, ops::Seqs q, ops::Models m = {}) {
  const int S = q.n_seq;
#pragma omp parallel for schedule(static)
  for (int ks = 0; ks < m.count * S; ++ks) {
    const int k = ks / S, s = ks % S;
    const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
    const size_t r0 = static_cast<size_t>(k) * q.rows + off[s], r1 = r0 + (off[s + 1] - off[s]);
    for (int c = 0; c < d; ++c) {
      T mean = 0, sigma = 0;
      int n = 0;
      detail::noise_stats(x, codes, r0, r1, d, c, mean, sigma, n);
      T dmean = 0, dsigma = 0;
      for (size_t r = r0; r < r1 && n > 0; ++r)
        if (codes[r] == kNoiseRow) {
          dmean += dout[r * d + c];
          dsigma += dout[r * d + c] * noise[r * d + c];
        }
      for (size_t r = r0; r < r1; ++r) {
        if (n > 0 && codes[r] == kNoiseRow) continue;
        T g = dout[r * d + c];
        if (codes[r] == kStatsRow)
          g += (dmean + dsigma * (x[r * d + c] - mean) / sigma) / static_cast<T>(n);
        dx[r * d + c] += g;
      }
    }
  }
}

}  // namespace lenlab::cpu
