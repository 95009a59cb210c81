#include "lab/run_train.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <Eigen/Core>

#include <chrono>
#include <optional>
#include <ostream>

#include "core/progress.hpp"
#include "lab/device.hpp"
#include "train/evaluate.hpp"
#include "lab/gpu_runs.hpp"
#include "lab/run_folder.hpp"
#include "train/trainer.hpp"

namespace lenlab {

int run_train(const TrainSpec& spec, const RunOptions& options) {
  const ResolvedSpec resolved = resolve(spec);
  const ResolvedDevice device = resolve_device(options.device);
#if LENLAB_WITH_CUDA
  if (device.cuda) return run_train_gpu_group({{spec, options}}).front();
#endif

  omp_set_num_threads(spec.threads);  // this thread's OpenMP team size (attention)
  // Eigen's thread count is process-wide: only write it when it changes, so that runs side by side
  // in a sweep (which sets it once, before starting them) never write it concurrently.
  if (Eigen::nbThreads() != spec.threads) Eigen::setNbThreads(spec.threads);

  Transformer<float> model(resolved.model);
  model.init(spec.seed);
  RunFolder folder(spec, resolved, options, device.label, model.num_parameters());

  std::ostream* log = options.log;
  std::optional<Progress> bar;
  if (log) bar.emplace("train", spec.steps, *log, options.log_is_tty);
  const TrainOutcome outcome = train(model, spec, resolved, [&](int step, double loss) {
    if (bar) bar->update(step, fmt::format("loss {:.3e}", loss));
    if (options.on_unit_done) options.on_unit_done();
  });
  if (bar) bar->finish();
  if (outcome.diverged) {
    folder.write_diverged(outcome);
    return kExitDiverged;
  }

  const auto eval_start = std::chrono::steady_clock::now();
  if (log) bar.emplace("eval", spec.l_test, *log, options.log_is_tty);
  const std::vector<LengthResult> results =
      evaluate(model, resolved.task, resolved.reparam, spec.l_test, spec.eval_samples,
               spec.eval_seed, [&](int l) {
                 if (bar) bar->update(l, fmt::format("length {}", l));
                 if (options.on_unit_done) options.on_unit_done();
               });
  if (bar) bar->finish();
  const double eval_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
  folder.write_completed(outcome, results, eval_seconds, model);
  return kExitOk;
}

}  // namespace lenlab
