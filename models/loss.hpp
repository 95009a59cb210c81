#pragma once
// Squared-error loss over a batch: L = Σ_s w_s (pred_s − target_s)², w_s = weights[s] or 1/S.
// Returns L (accumulated in double) and writes dpred_s = dL/dpred_s = 2 w_s (pred_s − target_s).
#include <cstddef>
#include <vector>

namespace lenlab {

template <class T>
double mse_loss(const T* pred, const std::vector<double>& target,
                const std::vector<double>& weights, T* dpred) {
  const size_t S = target.size();
  double loss = 0;
  for (size_t s = 0; s < S; ++s) {
    const double w = weights.empty() ? 1.0 / static_cast<double>(S) : weights[s];
    const double diff = static_cast<double>(pred[s]) - target[s];
    loss += w * diff * diff;
    if (dpred) dpred[s] = static_cast<T>(2.0 * w * diff);
  }
  return loss;
}

}  // namespace lenlab
