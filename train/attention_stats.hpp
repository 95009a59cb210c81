#pragma once
// Attention diagnostics at one test length (docs/methods.md): per layer and head, the mean
// attention entropy (nats) and the mean largest attention probability over the test sequences,
// each sequence contributing the mean over its query rows (every row below the last layer; the
// rows the heads read in the last, which is all it computes), weighted as the length's metrics
// weigh its sequences. LM-Infinite's Proposition 1 (paper 001) predicts the entropy grows like
// log n without a window; paper 002's temperature search matches these means across lengths.
#include <string>
#include <vector>

#include "tasks/batch.hpp"

namespace lenlab {

struct AttentionStats {
  int n_layer = 0, n_head = 0;
  std::vector<double> entropy;   // [n_layer · n_head], layer-major
  std::vector<double> max_prob;  // [n_layer · n_head]
  bool empty() const { return entropy.empty(); }
};

class AttentionStatsAccumulator {
 public:
  AttentionStatsAccumulator(int n_layer, int n_head);
  // One forward's statistics of layer l for one model's batch: stats [Q, n_head, 2] (entropy,
  // largest probability) at the query rows `rows` [Q] (rows of `batch`; < 0: padding).
  // Sequence s weighs `weights[s]`.
  template <class T>
  void add(int l, const T* stats, const std::vector<int>& rows, const Batch& batch,
           const std::vector<double>& weights);
  // The weighted means; empty when nothing was added.
  AttentionStats finish() const;

 private:
  int n_layer_, n_head_;
  std::vector<double> entropy_, max_prob_;  // weighted sums of the sequences' row means
  std::vector<double> weight_;              // [n_layer] the weights added
};

}  // namespace lenlab
