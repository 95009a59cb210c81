#include "train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lenlab {

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

}  // namespace lenlab
