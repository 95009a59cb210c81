#include "train/attention_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "train/evaluate.hpp"

namespace lenlab {

AttentionStatsAccumulator::AttentionStatsAccumulator(int n_layer, int n_head)
    : n_layer_(n_layer),
      n_head_(n_head),
      entropy_(static_cast<size_t>(n_layer) * n_head, 0.0),
      max_prob_(entropy_.size(), 0.0),
      weight_(n_layer, 0.0) {}

template <class T>
void AttentionStatsAccumulator::add(int l, const T* stats, const std::vector<int>& rows,
                                    const Batch& batch, const std::vector<double>& weights) {
  const int S = batch.n_seq(), H = n_head_;
  if (static_cast<int>(weights.size()) != S)
    throw std::invalid_argument("AttentionStatsAccumulator::add: one weight per sequence");
  // Each sequence's sums over its query rows.
  std::vector<double> e(static_cast<size_t>(S) * H, 0.0), p(e.size(), 0.0);
  std::vector<int> n(S, 0);
  for (size_t q = 0; q < rows.size(); ++q) {
    const int r = rows[q];
    if (r < 0 || r >= batch.n_tokens()) continue;
    const int s = static_cast<int>(std::upper_bound(batch.offsets.begin(), batch.offsets.end(), r) -
                                   batch.offsets.begin()) -
                  1;
    ++n[s];
    for (int h = 0; h < H; ++h) {
      e[static_cast<size_t>(s) * H + h] += static_cast<double>(stats[(q * H + h) * 2]);
      p[static_cast<size_t>(s) * H + h] += static_cast<double>(stats[(q * H + h) * 2 + 1]);
    }
  }
  for (int s = 0; s < S; ++s) {
    if (n[s] == 0) continue;
    weight_[l] += weights[s];
    for (int h = 0; h < H; ++h) {
      entropy_[static_cast<size_t>(l) * H + h] +=
          weights[s] * e[static_cast<size_t>(s) * H + h] / n[s];
      max_prob_[static_cast<size_t>(l) * H + h] +=
          weights[s] * p[static_cast<size_t>(s) * H + h] / n[s];
    }
  }
}

AttentionStats AttentionStatsAccumulator::finish() const {
  AttentionStats out;
  if (std::all_of(weight_.begin(), weight_.end(), [](double w) { return w == 0; })) return out;
  out.n_layer = n_layer_;
  out.n_head = n_head_;
  out.entropy = entropy_;
  out.max_prob = max_prob_;
  for (int l = 0; l < n_layer_; ++l)
    for (int h = 0; h < n_head_; ++h) {
      const size_t i = static_cast<size_t>(l) * n_head_ + h;
      out.entropy[i] /= weight_[l];
      out.max_prob[i] /= weight_[l];
    }
  return out;
}

template void AttentionStatsAccumulator::add(int, const float*, const std::vector<int>&,
                                             const Batch&, const std::vector<double>&);
template void AttentionStatsAccumulator::add(int, const double*, const std::vector<int>&,
                                             const Batch&, const std::vector<double>&);

}  // namespace lenlab
