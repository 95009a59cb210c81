#include "train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lenlab {

Batch slice_batch(const Batch& b, int begin, int end) {
  Batch out;
  const int t0 = b.offsets[begin], t1 = b.offsets[end];
  out.tokens.assign(b.tokens.begin() + t0, b.tokens.begin() + t1);
  for (int s = begin; s <= end; ++s) out.offsets.push_back(b.offsets[s] - t0);
  out.targets.assign(b.targets.begin() + begin, b.targets.begin() + end);
  return out;
}

LengthScorer::LengthScorer(const Batch& batch, const Reparam& reparam, int length)
    : batch_(batch), reparam_(reparam) {
  r_.length = length;
  r_.n_sequences = batch.n_seq();
  r_.exact = !batch.weights.empty();
}

void LengthScorer::add(int s, double zs) {
  const double w = r_.exact ? batch_.weights[s] : 1.0 / batch_.n_seq();
  const double y = batch_.targets[s];
  bool clamped = false;
  const double y_hat = reparam_.inverse(zs, &clamped);
  r_.n_clamped += clamped;
  if (!std::isfinite(y_hat)) {
    ++r_.n_nonfinite;
  } else {
    r_.mse += w * (y_hat - y) * (y_hat - y);
    r_.mean_prediction += w * y_hat;
    finite_weight_ += w;
  }
  const double fy = reparam_.forward(y);
  r_.mse_reparam += w * (zs - fy) * (zs - fy);
  r_.mean_target += w * y;
}

LengthResult LengthScorer::finish() const {
  LengthResult r = r_;
  if (r.n_nonfinite > 0) {
    // Honest about it: one infinite prediction makes the mean squared error infinite.
    r.mse = std::numeric_limits<double>::infinity();
    r.mean_prediction = finite_weight_ > 0 ? r.mean_prediction / finite_weight_
                                           : std::numeric_limits<double>::infinity();
  }
  return r;
}

std::vector<LengthResult> evaluate(Transformer<float>& model, TaskKind task, const Reparam& reparam,
                                   int l_max, int n_samples, uint64_t eval_seed,
                                   const std::function<void(int)>& on_length, int chunk) {
  std::vector<LengthResult> results;
  for (int l = 1; l <= l_max; ++l) {
    const Batch batch = eval_batch(task, l, n_samples, eval_seed);
    LengthScorer scorer(batch, reparam, l);
    for (int begin = 0; begin < batch.n_seq(); begin += chunk) {
      const int end = std::min(begin + chunk, batch.n_seq());
      const cpu::Buffer<float>& z = model.forward(slice_batch(batch, begin, end));
      for (int s = begin; s < end; ++s) scorer.add(s, z[s - begin]);
    }
    results.push_back(scorer.finish());
    if (on_length) on_length(l);
  }
  return results;
}

}  // namespace lenlab
