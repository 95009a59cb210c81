#include "train/attention_probe.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "train/evaluate.hpp"

namespace lenlab {

AttentionLogitsAccumulator::AttentionLogitsAccumulator(int n_layer, int n_head)
    : n_layer_(n_layer),
      n_head_(n_head),
      var_(static_cast<size_t>(n_layer) * n_head, 0.0),
      var_weight_(var_.size(), 0.0),
      dist_(var_.size()),
      dist_weight_(var_.size()) {}

template <class T>
void AttentionLogitsAccumulator::add(int l, const T* P, int L, double weight) {
  std::vector<double> logs, dsum;
  std::vector<int> dn;
  for (int h = 0; h < n_head_; ++h) {
    const size_t lh = static_cast<size_t>(l) * n_head_ + h;
    double var_sum = 0;
    int rows = 0;
    dsum.assign(L, 0.0);
    dn.assign(L, 0);
    for (int i = 0; i < L; ++i) {
      const T* p = P + (static_cast<size_t>(h) * L + i) * L;
      logs.clear();
      double mean = 0;
      for (int j = 0; j <= i; ++j)
        if (p[j] > 0) {
          logs.push_back(std::log(static_cast<double>(p[j])));
          mean += logs.back();
        }
      if (logs.empty()) continue;  // a row the forward skipped
      mean /= static_cast<double>(logs.size());
      double var = 0;
      for (double x : logs) var += (x - mean) * (x - mean);
      var_sum += var / static_cast<double>(logs.size());
      ++rows;
      for (int j = 0; j <= i; ++j)
        if (p[j] > 0) {
          dsum[i - j] += std::log(static_cast<double>(p[j])) - mean;
          ++dn[i - j];
        }
    }
    if (rows == 0) continue;
    var_[lh] += weight * var_sum / rows;
    var_weight_[lh] += weight;
    if (static_cast<int>(dist_[lh].size()) < L) {
      dist_[lh].resize(L, 0.0);
      dist_weight_[lh].resize(L, 0.0);
    }
    for (int d = 0; d < L; ++d)
      if (dn[d] > 0) {
        dist_[lh][d] += weight * dsum[d] / dn[d];
        dist_weight_[lh][d] += weight;
      }
  }
}

AttentionLogits AttentionLogitsAccumulator::finish() const {
  AttentionLogits out;
  for (size_t lh = 0; lh < var_.size(); ++lh)
    for (size_t d = 0; d < dist_weight_[lh].size(); ++d)
      if (dist_weight_[lh][d] > 0)
        out.max_distance = std::max(out.max_distance, static_cast<int>(d));
  if (out.max_distance < 0) return out;
  out.n_layer = n_layer_;
  out.n_head = n_head_;
  out.logit_var.assign(var_.size(), std::numeric_limits<double>::quiet_NaN());
  const size_t D = static_cast<size_t>(out.max_distance) + 1;
  out.by_distance.assign(var_.size() * D, std::numeric_limits<double>::quiet_NaN());
  for (size_t lh = 0; lh < var_.size(); ++lh) {
    if (var_weight_[lh] > 0) out.logit_var[lh] = var_[lh] / var_weight_[lh];
    for (size_t d = 0; d < dist_weight_[lh].size(); ++d)
      if (dist_weight_[lh][d] > 0) out.by_distance[lh * D + d] = dist_[lh][d] / dist_weight_[lh][d];
  }
  return out;
}

template void AttentionLogitsAccumulator::add(int, const float*, int, double);
template void AttentionLogitsAccumulator::add(int, const double*, int, double);

}  // namespace lenlab
