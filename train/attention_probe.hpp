#pragma once
// Attention logits, read back from the softmax probabilities the training forward keeps
// (Model::download_attention_probabilities), on the first test sequences of a length. Softmax
// forgets a row's constant, so what is measured is shift-free: for row i and a key j it sees,
// the centred logit c_ij = log p_ij − mean_j' log p_ij' = s_ij − mean_j' s_ij'.
//  * logit_var: the variance of a row's logits over the keys it sees, the mean over rows (σ² of
//    paper 002's Assumption 1, which its Propositions 1 and 2 need);
//  * by_distance: the mean centred logit at relative distance d = i − j (rows apart), for
//    d = 0..max_distance: how much more or less than its row's average a key d tokens back is
//    attended to, in logit units (e^Δ is the ratio of probabilities).
// Rows the forward skipped (all zero: the last layer's rows no head reads) are left out, and a
// probability that is exactly 0 counts as a key the row does not see (a window or mask; a float
// softmax underflows to 0 only for logits ~100 below the row's largest).
// Sequences weigh as in AttentionStats; each sequence contributes the mean over its rows (and,
// per distance, over its rows that have that distance).
#include <string>
#include <vector>

#include "tasks/batch.hpp"

namespace lenlab {

struct AttentionLogits {
  int n_layer = 0, n_head = 0;
  int max_distance = -1;            // the largest distance any row sees
  std::vector<double> logit_var;    // [n_layer · n_head]
  std::vector<double> by_distance;  // [n_layer · n_head · (max_distance + 1)]; NaN: no pair
  bool empty() const { return logit_var.empty(); }
  double at(int l, int h, int d) const {
    return by_distance[(static_cast<size_t>(l) * n_head + h) * (max_distance + 1) + d];
  }
};

class AttentionLogitsAccumulator {
 public:
  AttentionLogitsAccumulator(int n_layer, int n_head);
  // Layer l's probabilities of one sequence: P [n_head, L, L] (row i, key j), weighing `weight`.
  template <class T>
  void add(int l, const T* P, int L, double weight);
  AttentionLogits finish() const;  // empty when nothing was added

 private:
  int n_layer_, n_head_;
  std::vector<double> var_, var_weight_;  // [n_layer · n_head]
  // Per (layer, head): per distance the weighted sum of sequence means, and their weights.
  std::vector<std::vector<double>> dist_, dist_weight_;
};

// How many sequences of a length the probe reads: the first ones of its test set.
inline constexpr int kAttentionProbeSamples = 64;

}  // namespace lenlab
