#include "models/optimizer.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cmath>

#include "core/error.hpp"
#include "models/parameters.hpp"

namespace lenlab {

void OptimizerConfig::validate(int total_steps) const {
  if (!std::isfinite(lr) || lr <= 0)
    throw UsageError(fmt::format("--lr must be a finite number > 0, got {}", lr));
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    throw UsageError(fmt::format("Adam betas must lie in [0, 1), got {} and {}", beta1, beta2));
  if (!std::isfinite(weight_decay) || weight_decay < 0)
    throw UsageError(
        fmt::format("--weight-decay must be a finite number >= 0, got {}", weight_decay));
  if (warmup_steps < 0)
    throw UsageError(fmt::format("--warmup must be >= 0, got {}", warmup_steps));
  if (total_steps <= 0)
    throw UsageError(fmt::format("--steps must be a positive integer, got {}", total_steps));
  if (!std::isfinite(min_lr_ratio) || min_lr_ratio < 0 || min_lr_ratio > 1)
    throw UsageError(fmt::format("--min-lr-ratio must lie in [0, 1], got {}", min_lr_ratio));
  if (!std::isfinite(clip_norm))
    throw UsageError(
        fmt::format("--clip must be finite (<= 0 disables clipping), got {}", clip_norm));
}

double scheduled_lr(const OptimizerConfig& oc, int step, int total_steps) {
  if (step < oc.warmup_steps) return oc.lr * (step + 1) / oc.warmup_steps;
  const int decay_steps = total_steps - oc.warmup_steps;
  const double progress =
      decay_steps <= 1 ? 1.0 : static_cast<double>(step - oc.warmup_steps) / (decay_steps - 1);
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * std::min(progress, 1.0)));
  return oc.lr * (oc.min_lr_ratio + (1.0 - oc.min_lr_ratio) * cosine);
}

template <class T>
double clip_grad_norm(T* grads, size_t n, double max_norm) {
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> g(grads, static_cast<Eigen::Index>(n));
  // Eigen's vectorised reduction sums in 16 independent lanes, so a float sum over ~10⁵ squares
  // keeps ~1e-6 relative accuracy: plenty for a clipping threshold.
  const double norm = std::sqrt(static_cast<double>(g.square().sum()));
  if (max_norm > 0 && norm > max_norm) g *= static_cast<T>(max_norm / (norm + 1e-6));
  return norm;
}

template <class T>
AdamW<T>::AdamW(const OptimizerConfig& oc, const ModelConfig& model)
    : oc_(oc),
      decay_mask_(weight_decay_mask<T>(model)),
      m_(Eigen::Array<T, Eigen::Dynamic, 1>::Zero(decay_mask_.size())),
      v_(Eigen::Array<T, Eigen::Dynamic, 1>::Zero(decay_mask_.size())) {}

template <class T>
void AdamW<T>::step(T* params, const T* grads, double lr) {
  ++t_;
  const T b1 = static_cast<T>(oc_.beta1), b2 = static_cast<T>(oc_.beta2);
  const T c1 = static_cast<T>(1.0 / (1.0 - std::pow(oc_.beta1, t_)));
  const T c2 = static_cast<T>(1.0 / (1.0 - std::pow(oc_.beta2, t_)));
  const T lr_t = static_cast<T>(lr), eps = static_cast<T>(oc_.eps);
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Index n = decay_mask_.size();
  Eigen::Map<Array> p(params, n), m(m_.data(), n), v(v_.data(), n);
  Eigen::Map<const Array> g(grads, n);
  // Decoupled weight decay first (p ← p − lr·λ·p on matrices), then the Adam step.
  if (oc_.weight_decay > 0) p -= static_cast<T>(lr * oc_.weight_decay) * p * decay_mask_;
  m = b1 * m + (T(1) - b1) * g;
  v = b2 * v + (T(1) - b2) * g.square();
  p -= lr_t * (m * c1) / ((v * c2).sqrt() + eps);
}

template <class T>
Eigen::Array<T, Eigen::Dynamic, 1> weight_decay_mask(const ModelConfig& c) {
  Eigen::Array<T, Eigen::Dynamic, 1> mask =
      Eigen::Array<T, Eigen::Dynamic, 1>::Zero(parameter_count(c));
  for (const TensorInfo& t : parameter_layout(c))
    if (t.shape.size() == 2 && t.name != "wte" && t.name != "wpe")
      mask.segment(t.offset, t.size).setOnes();
  return mask;
}

template Eigen::Array<float, Eigen::Dynamic, 1> weight_decay_mask<float>(const ModelConfig&);
template Eigen::Array<double, Eigen::Dynamic, 1> weight_decay_mask<double>(const ModelConfig&);

template double clip_grad_norm<float>(float*, size_t, double);
template double clip_grad_norm<double>(double*, size_t, double);
template class AdamW<float>;
template class AdamW<double>;

}  // namespace lenlab
