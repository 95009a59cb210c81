#pragma once
// The training loop: fresh batches with lengths uniform in 1..l_train, targets mapped by f,
// squared-error loss, backward, global-norm clipping, AdamW on the scheduled learning rate.
#include <functional>
#include <vector>

#include "train/train_spec.hpp"
#include "models/transformer.hpp"

namespace lenlab {

struct StepLog {
  int step;  // 1-based
  double lr;
  double loss;       // mean (z − f(y))² on this step's batch
  double grad_norm;  // before clipping
};

struct TrainOutcome {
  std::vector<StepLog> log;
  bool diverged = false;
  int diverged_step = 0;  // the step whose loss or gradient was not finite
  double seconds = 0;
  // Mean loss of the last min(100, steps) steps: less noisy than the last batch's.
  double final_loss() const;
};

// on_step(step, loss) is called after each step (for progress display).
TrainOutcome train(Transformer<float>& model, const TrainSpec& spec, const ResolvedSpec& resolved,
                   const std::function<void(int, double)>& on_step = {});

}  // namespace lenlab
