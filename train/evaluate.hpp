#pragma once
// Evaluation at every test length: the model's output z is mapped back with f⁻¹ and compared with
// the original target y. Each length uses the task's fixed evaluation set (tasks/task.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "models/model.hpp"
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

// One run's evaluation settings.
struct EvalJob {
  TaskKind task;
  const Reparam* reparam;
  std::vector<int> lengths;  // the test lengths, ascending (empty: none, e.g. a diverged run)
  int eval_samples = 0;
  uint64_t eval_seed = 0;
  AttentionSpec attention;  // at test time (inference-side methods); default: plain causal
  // Optional: called with every test sequence's raw output z (before f⁻¹), in sequence order
  // within a length: (the length's evaluation set, the sequence's index in it, z).
  std::function<void(const Batch&, int, double)> on_output;
};

// Evaluates model k on jobs[k] at its lengths through the inference path (nothing kept for
// a backward; memory linear in the length), all models at each length at once, in forwards of
// at most `max_rows` rows over all models. Returns each run's results; on_length(k, l) is called
// after run k's length l.
template <class B>
std::vector<std::vector<LengthResult>> evaluate(Model<B>& model, const std::vector<EvalJob>& jobs,
                                                const std::function<void(int, int)>& on_length = {},
                                                size_t max_rows = B::kDevice ? size_t{1} << 18
                                                                             : size_t{1} << 13);

}  // namespace lenlab
