#pragma once
// VCL's random prefix on the host: models/ops/prefix_noise.hpp's features, one per (model,
// feature), in parallel.
#include <algorithm>
#include <cstddef>

#include "models/cpu/embedding.hpp"
#include "models/ops/prefix_noise.hpp"

namespace lenlab::cpu {

// out [K, N, d] from x [K, N, d], noise [K, N, d] and codes [K, N] (ops::PrefixNoiseCode);
// padding rows 0.
template <class T>
void prefix_noise_forward(T* out, const T* x, const T* noise, const int* codes, int d, ops::Seqs q,
                          ops::Models m = {}) {
#pragma omp parallel for schedule(static)
  for (int kc = 0; kc < m.count * d; ++kc)
    ops::noise_feature(x, noise, codes, q, kc / d, d, kc % d).forward(out);
  for (int k = 0; k < m.count; ++k)  // padding rows
    for (size_t r = used_rows(q, k); r < static_cast<size_t>(q.rows); ++r)
      std::fill_n(out + (static_cast<size_t>(k) * q.rows + r) * d, d, T(0));
}

// Adds dLoss/dx into dx [K, N, d], from dout [K, N, d] and the forward's x, noise and codes
// (through the statistics too).
template <class T>
void prefix_noise_backward(T* dx, const T* dout, const T* x, const T* noise, const int* codes,
                           int d, ops::Seqs q, ops::Models m = {}) {
#pragma omp parallel for schedule(static)
  for (int kc = 0; kc < m.count * d; ++kc)
    ops::noise_feature(x, noise, codes, q, kc / d, d, kc % d).backward(dx, dout);
}

}  // namespace lenlab::cpu
