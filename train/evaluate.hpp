#pragma once
// Evaluation at every test length: the model's output z is mapped back with f⁻¹ and compared with
// the original target y. Each length uses the task's fixed evaluation set (tasks/task.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "models/transformer.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"

namespace lenlab {

struct LengthResult {
  int length = 0;
  int n_sequences = 0;
  bool exact = false;          // all 2^length sequences, probability-weighted
  double mse = 0;              // E[(f⁻¹(z) − y)²]: the paper's test loss
  double mse_reparam = 0;      // E[(z − f(y))²]: the loss the model was trained on
  double mean_prediction = 0;  // E[f⁻¹(z)] over the finite predictions
  double mean_target = 0;      // E[y]
  int n_clamped = 0;           // outputs outside f's range, mapped to its nearest end
  int n_nonfinite = 0;         // f⁻¹(z) not finite (e.g. 1/z² at z = 0): mse is then +inf
};

// One length's result, accumulated from the model's outputs on that length's evaluation batch
// (in any order, in chunks): add(s, z) for every sequence s, then finish().
class LengthScorer {
 public:
  LengthScorer(const Batch& batch, const Reparam& reparam, int length);
  void add(int s, double z);  // z: the model's output for sequence s of the batch
  LengthResult finish() const;

 private:
  const Batch& batch_;
  const Reparam& reparam_;
  LengthResult r_;
  double finite_weight_ = 0;
};

// Sequences [begin, end) of `b` as a batch of their own (tokens, offsets, targets; no weights).
Batch slice_batch(const Batch& b, int begin, int end);

// Lengths 1..l_max; calls on_length(done) after each. Runs in chunks of `chunk` sequences so memory
// stays bounded at long lengths.
std::vector<LengthResult> evaluate(Transformer<float>& model, TaskKind task, const Reparam& reparam,
                                   int l_max, int n_samples, uint64_t eval_seed,
                                   const std::function<void(int)>& on_length = {}, int chunk = 64);

}  // namespace lenlab
