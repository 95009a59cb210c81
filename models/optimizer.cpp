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
  if (!(beta1 >= 0 && beta1 < 1))
    throw UsageError(
        fmt::format("--beta1 (Adam's first-moment decay) must lie in [0, 1), got {}", beta1));
  if (!(beta2 >= 0 && beta2 < 1))
    throw UsageError(
        fmt::format("--beta2 (Adam's second-moment decay) must lie in [0, 1), got {}", beta2));
  if (!std::isfinite(eps) || eps <= 0)
    throw UsageError(fmt::format(
        "--adam-eps must be a finite number > 0 (it keeps Adam's step finite), got {}", eps));
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

ops::AdamWStep adamw_settings(const OptimizerConfig& oc, double lr, int step) {
  const int t = step + 1;  // Adam counts steps from 1 for the bias correction
  ops::AdamWStep s;
  s.lr = lr;
  s.beta1 = oc.beta1;
  s.beta2 = oc.beta2;
  s.one_minus_beta1 = 1.0 - oc.beta1;
  s.one_minus_beta2 = 1.0 - oc.beta2;
  s.eps = oc.eps;
  s.decay = oc.weight_decay > 0 ? lr * oc.weight_decay : 0.0;
  s.c1 = 1.0 / (1.0 - std::pow(oc.beta1, t));
  s.c2 = 1.0 / (1.0 - std::pow(oc.beta2, t));
  s.clip_norm = oc.clip_norm;
  return s;
}

template <class T>
Eigen::Array<T, Eigen::Dynamic, 1> weight_decay_mask(const ModelConfig& c) {
  Eigen::Array<T, Eigen::Dynamic, 1> mask =
      Eigen::Array<T, Eigen::Dynamic, 1>::Zero(parameter_count(c));
  for (const TensorInfo& t : parameter_layout(c))
    // Weight matrices only: not the embeddings, nor a positional bias's parameters ("pe.*").
    if (t.shape.size() == 2 && t.name != "wte" && t.name != "wpe" && t.name.rfind("pe.", 0) != 0)
      mask.segment(t.offset, t.size).setOnes();
  return mask;
}

template Eigen::Array<float, Eigen::Dynamic, 1> weight_decay_mask<float>(const ModelConfig&);
template Eigen::Array<double, Eigen::Dynamic, 1> weight_decay_mask<double>(const ModelConfig&);

}  // namespace lenlab
