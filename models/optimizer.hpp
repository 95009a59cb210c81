#pragma once
// AdamW (Loshchilov & Hutter) over the flat parameter buffer, the learning-rate schedule (linear
// warm-up, then cosine decay to a floor) and gradient clipping by global norm.
#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "models/config.hpp"

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

// Scales grads [n] so their global L2 norm is at most max_norm; returns the norm before
// clipping. (Pass 64-byte-aligned storage, cpu::Buffer, for run-to-run bit-identical results.)
template <class T>
double clip_grad_norm(T* grads, size_t n, double max_norm);

template <class T>
class AdamW {
 public:
  AdamW(const OptimizerConfig& oc, const ModelConfig& model);
  // One update with learning rate lr; t counts steps from 1 for the bias correction.
  // params and grads [n_params], in the layout of the model the optimizer was made for.
  void step(T* params, const T* grads, double lr);
  int steps_taken() const { return t_; }

 private:
  OptimizerConfig oc_;
  Eigen::Array<T, Eigen::Dynamic, 1> decay_mask_;  // [n_params] 1 where weight decay applies
  Eigen::Array<T, Eigen::Dynamic, 1> m_, v_;       // first and second moments, parameter layout
  int t_ = 0;
};

// 1 for every element of a weight matrix (rank-2 tensors except the embeddings), 0 elsewhere.
template <class T>
Eigen::Array<T, Eigen::Dynamic, 1> weight_decay_mask(const ModelConfig& c);

extern template class AdamW<float>;
extern template class AdamW<double>;

}  // namespace lenlab
