#pragma once
// What a one-layer linear-attention model can see of a 0/1 sequence: its length l, its number of
// ones n and its last bit (the query under the layouts without EOS). Every expectation of the
// theory is a finite sum over these classes with exact probabilities, never a sample.
#include <vector>

#include "tasks/task.hpp"

namespace lenlab {

struct SequenceClass {
  int length = 0;
  int n_ones = 0;
  int last_bit = 0;
  double probability = 0;  // P(n_ones, last_bit | length) under the task's bit distribution
};

// Every class of positive probability at this length (length >= 1), probabilities summing to 1:
// - mean, length, sum (fair bits): P(n, last 1) = C(l-1, n-1) / 2^l, P(n, last 0) = C(l-1, n) /
// 2^l;
// - mean-uniform: n uniform in 0..l, ones at uniformly random places: P(n, last 1) = n / (l (l+1)).
// Binomial coefficients go through lgamma, so lengths in the thousands neither overflow nor
// underflow (relative error ~1e-13).
std::vector<SequenceClass> sequence_classes(TaskKind task, int length);

}  // namespace lenlab
