#include "train/trainer.hpp"

#include <chrono>
#include <cmath>

#include "core/rng.hpp"
#include "models/loss.hpp"
#include "models/optimizer.hpp"
#include "tasks/task.hpp"

namespace lenlab {

double TrainOutcome::final_loss() const {
  if (log.empty()) return 0;
  const size_t n = std::min<size_t>(100, log.size());
  double sum = 0;
  for (size_t i = log.size() - n; i < log.size(); ++i) sum += log[i].loss;
  return sum / static_cast<double>(n);
}

TrainOutcome train(Transformer<float>& model, const TrainSpec& spec, const ResolvedSpec& resolved,
                   const std::function<void(int, double)>& on_step) {
  const auto start = std::chrono::steady_clock::now();
  TrainOutcome outcome;
  outcome.log.reserve(spec.steps);
  // Data has its own stream so that changing the model's size never changes the data.
  Rng data_rng = Rng::stream(spec.seed, 1);
  AdamW<float> optimizer(spec.optimizer, model.config());
  cpu::Buffer<float> dpred;  // aligned: see cpu::Buffer
  std::vector<double> targets;
  for (int step = 0; step < spec.steps; ++step) {
    Batch batch = sample_train_batch(resolved.task, spec.l_train, spec.batch_size, data_rng);
    targets.resize(batch.n_seq());
    for (int s = 0; s < batch.n_seq(); ++s) targets[s] = resolved.reparam.forward(batch.targets[s]);
    const cpu::Buffer<float>& pred = model.forward(batch);
    dpred.resize(batch.n_seq());
    const double loss = mse_loss(pred.data(), targets, batch.weights, dpred.data());
    model.zero_grad();
    model.backward(batch, dpred.data());
    const double norm =
        clip_grad_norm(model.grads().data(), model.grads().size(), spec.optimizer.clip_norm);
    if (!std::isfinite(loss) || !std::isfinite(norm)) {
      outcome.diverged = true;
      outcome.diverged_step = step + 1;
      break;
    }
    const double lr = scheduled_lr(spec.optimizer, step, spec.steps);
    optimizer.step(model.params().data(), model.grads().data(), lr);
    outcome.log.push_back({step + 1, lr, loss, norm});
    if (on_step) on_step(step + 1, loss);
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace lenlab
