#pragma once
// The one training loop, for any backend and any number of runs at once: K runs of one model
// shape train in lockstep as K models (models/model.hpp), each with its own seed, data stream,
// task, reparam, training length and optimizer settings. Each step: the task draws a batch with
// lengths uniform in 1..l_train, targets are mapped by f, the model runs forward, the losses (a
// layer each: MSE on the scalar head, cross-entropy on the token head) give the gradients of the
// heads' outputs, backward, global-norm clipping and AdamW on the scheduled learning rate. A run
// whose loss or gradient turns non-finite stops there (its model is left untouched); the rest go
// on. On the CPU, a run is a group of one.
#include <functional>
#include <vector>

#include "models/model.hpp"
#include "tasks/batch.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct StepLog {
  int step;  // 1-based
  double lr;
  double loss;           // the weighted loss on this step's batch (on f(y) for the scalar head)
  double grad_norm;      // before clipping
  double pair_loss = 0;  // the misalignment regularizer's α·L_misalign, included in loss (else 0)
};

struct TrainOutcome {
  std::vector<StepLog> log;
  bool diverged = false;
  int diverged_step = 0;  // the step whose loss or gradient was not finite
  // Why, when the cause is known before the loss: f(y) not finite on a training target (a reparam
  // registered from Python is checked on a grid, not at every value). Empty: the loss or gradient.
  std::string diverged_reason;
  // The step after which a stop check (StopCheck) stopped the run, its weights those after that
  // step; 0: it ran every step (or diverged).
  int stopped_step = 0;
  double seconds = 0;
  // Mean loss of the last min(100, steps) steps: less noisy than the last batch's.
  double final_loss() const;
};

// One run's settings as the loop needs them.
struct TrainJob {
  const TrainSpec* spec;
  const ResolvedSpec* resolved;
  // Called with each step's batch (step 1-based) before the model sees it, and its scalar targets
  // after the reparam, f_targets [batch.n_read()]: the batch log (train/batch_log.hpp). Empty:
  // nothing is called.
  std::function<void(int step, const Batch& batch, const double* f_targets)> on_batch;
};

// Called after every step with which models are still training (1: neither stopped nor
// diverged); returns, per model, whether it stops now (train/until_fit.hpp's rule). A stopped
// model keeps the weights it has after this step; the group's other models go on.
using StopCheck = std::function<std::vector<char>(int step, const std::vector<char>& training)>;

// Trains model k of `model` on jobs[k] (every job has the same steps and batch size); model k
// must be initialised. on_step(k, step, loss) is called after each of run k's steps; `stop`, when
// given, after every step.
template <class B>
std::vector<TrainOutcome> train(Model<B>& model, const std::vector<TrainJob>& jobs,
                                const std::function<void(int, int, double)>& on_step = {},
                                const StopCheck& stop = {});

}  // namespace lenlab
