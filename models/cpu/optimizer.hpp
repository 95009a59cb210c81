#pragma once
// The optimizer's operations over each model's flat parameter buffer [P] (models/parameters.hpp):
// the global gradient norm and one AdamW step with global-norm clipping (models/optimizer.hpp has
// the schedule and the settings).
#include <Eigen/Core>
#include <cmath>
#include <cstddef>

#include "models/ops/args.hpp"

namespace lenlab::cpu {

// norms [K] = the L2 norm of each model's n gradients. (Pass 64-byte-aligned storage, cpu::Buffer:
// Eigen's vectorised sum then has the same order in every run.) Eigen sums in 16 independent
// lanes, so a float sum over ~10⁵ squares keeps ~1e-6 relative accuracy: plenty for clipping.
template <class T>
void grad_norm(double* norms, const T* grads, size_t n, ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> g(grads + k * m.param_stride,
                                                           static_cast<Eigen::Index>(n));
    norms[k] = std::sqrt(static_cast<double>(g.square().sum()));
  }
}

// For each model whose norms[k] (and losses[k], if losses is not null) is finite: scales its
// gradients by clip/(norm + 1e-6) when norm > clip > 0 (the gradients themselves are left
// unchanged; the scaled value is used), then applies decoupled weight decay on the matrices
// (decay_mask [n], shared) and the Adam update. A model with a non-finite norm or loss is left
// untouched. params, grads, m1, m2 [K, n] (stride P); steps [K].
template <class T>
void adamw_step(T* params, const T* grads, T* m1, T* m2, const T* decay_mask,
                const ops::AdamWStep* steps, const double* norms, const double* losses, size_t n,
                ops::Models m = {}) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  for (int k = 0; k < m.count; ++k) {
    if (!std::isfinite(norms[k]) || (losses && !std::isfinite(losses[k]))) continue;
    const ops::AdamWStep& s = steps[k];
    const size_t off = k * m.param_stride;
    Eigen::Map<Array> p(params + off, len), m_(m1 + off, len), v(m2 + off, len);
    Eigen::Map<const Array> g(grads + off, len), mask(decay_mask, len);
    const T scale = s.clip_norm > 0 && norms[k] > s.clip_norm
                        ? static_cast<T>(s.clip_norm / (norms[k] + 1e-6))
                        : T(1);
    const T b1 = static_cast<T>(s.beta1), b2 = static_cast<T>(s.beta2);
    const T a1 = static_cast<T>(s.one_minus_beta1), a2 = static_cast<T>(s.one_minus_beta2);
    const T c1 = static_cast<T>(s.c1), c2 = static_cast<T>(s.c2);
    const T lr = static_cast<T>(s.lr), eps = static_cast<T>(s.eps);
    // Decoupled weight decay first (p ← p − lr·λ·p on matrices), then the Adam step.
    if (s.decay != 0) p -= static_cast<T>(s.decay) * p * mask;
    m_ = b1 * m_ + a1 * (g * scale);
    v = b2 * v + a2 * (g * scale).square();
    p -= lr * (m_ * c1) / ((v * c2).sqrt() + eps);
  }
}

}  // namespace lenlab::cpu
