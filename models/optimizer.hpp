#pragma once
// AdamW (Loshchilov & Hutter) settings, the learning-rate schedule (linear warm-up, then cosine
// decay to a floor) and clipping by global norm; the update itself is a backend operation
// (ops::adamw_step) over the flat parameter buffer.
#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "models/config.hpp"
#include "models/ops/args.hpp"

namespace lenlab {

struct OptimizerConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled; applied to matrices only (not biases, gains)
  int warmup_steps = 200;
  double min_lr_ratio = 0.0;             // cosine decays to lr·min_lr_ratio at the last step
  double clip_norm = 1.0;                // <= 0 disables clipping
  void validate(int total_steps) const;  // throws UsageError naming the bad value
};

// Learning rate at `step` (0-based) of `total_steps`: lr·(step+1)/warmup during warm-up, then
// lr·(min + (1 − min)·(1 + cos(π·progress))/2) with progress going 0 → 1 over the rest.
double scheduled_lr(const OptimizerConfig& oc, int step, int total_steps);

// One model's AdamW settings for step `step` (0-based) at learning rate lr: what
// ops::adamw_step (models/cpu/optimizer.hpp, models/cuda/) applies, bias corrections included.
ops::AdamWStep adamw_settings(const OptimizerConfig& oc, double lr, int step);

// 1 for every element of a weight matrix (rank-2 tensors except the embeddings), 0 elsewhere.
template <class T>
Eigen::Array<T, Eigen::Dynamic, 1> weight_decay_mask(const ModelConfig& c);

}  // namespace lenlab
