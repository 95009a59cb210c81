#pragma once
// run_group_on<B>: a group of runs trained and evaluated together on one backend, each written
// into its own folder (lab/run_folder.hpp). The CPU runs a group of one (lab/run_train.cpp); the
// GPU runs groups of runs that share a model shape (lab/cuda/run_group_cuda.cpp).
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "lab/gpu_runs.hpp"
#include "lab/run_folder.hpp"
#include "models/model.hpp"
#include "train/evaluate.hpp"
#include "train/misalignment.hpp"
#include "train/run_cost.hpp"
#include "train/trainer.hpp"

namespace lenlab {

template <class B>
std::vector<int> run_group_on(const std::vector<GroupJob>& jobs, const std::string& device_label) {
  using Clock = std::chrono::steady_clock;
  const int K = static_cast<int>(jobs.size());
  if (K == 0) return {};
  std::vector<ResolvedSpec> resolved;
  for (const GroupJob& j : jobs) {
    resolved.push_back(resolve(j.spec));
    if (gpu_group_key(j.spec) != gpu_group_key(jobs[0].spec))
      throw UsageError(
          "runs trained together must share the model shape, positional encoding, steps and "
          "batch size");
  }
  const ModelConfig& config = resolved[0].model;
  Model<B> model(config, K);
  std::vector<std::unique_ptr<RunFolder>> folders;
  for (int k = 0; k < K; ++k) {
    model.init(k, jobs[k].spec.seed);
    folders.push_back(std::make_unique<RunFolder>(jobs[k].spec, resolved[k], jobs[k].options,
                                                  device_label, model.num_parameters()));
    if (B::kDevice) folders.back()->manifest()["models_trained_together"] = K;
  }
  std::vector<RunCost> costs;
  for (int k = 0; k < K; ++k) costs.push_back(estimate_run_cost(jobs[k].spec, resolved[k].model));
  auto work_done = [&](int k, double flops) {
    if (jobs[k].options.on_work_done) jobs[k].options.on_work_done(flops);
  };
  // A group of one (`lenlab train`) shows progress bars for its training and its evaluation.
  std::ostream* log = K == 1 ? jobs[0].options.log : nullptr;
  std::optional<Progress> bar;

  // ---- training: every run in lockstep
  std::vector<TrainJob> train_jobs;
  for (int k = 0; k < K; ++k) train_jobs.push_back({&jobs[k].spec, &resolved[k]});
  if (log) bar.emplace("train", jobs[0].spec.steps, *log, jobs[0].options.log_is_tty);
  const std::vector<TrainOutcome> outcomes =
      train(model, train_jobs, [&](int k, int step, double loss) {
        if (bar && k == 0) bar->update(step, fmt::format("loss {:.3e}", loss));
        work_done(k, costs[k].train_step_flops);
      });
  if (bar) bar->finish();

  // ---- evaluation: every run that did not diverge, at every length, through the inference path
  const auto eval_start = Clock::now();
  std::vector<EvalJob> eval_jobs;
  int l_max = 0;
  for (int k = 0; k < K; ++k) {
    const TrainSpec& s = jobs[k].spec;
    EvalJob job = eval_job(resolved[k], s);
    if (outcomes[k].diverged) job.lengths.clear();
    if (!job.lengths.empty()) l_max = std::max(l_max, job.lengths.back());
    eval_jobs.push_back(std::move(job));
  }
  // The bar counts work, not lengths: a long test length costs more than all short ones.
  constexpr double kFlopsPerUnit = 1e6;
  double eval_done = 0;
  if (log && l_max > 0) {
    bar.emplace("eval", static_cast<int64_t>(costs[0].eval_flops / kFlopsPerUnit) + 1, *log,
                jobs[0].options.log_is_tty);
    bar->show_counts(false);
  }
  const std::vector<std::vector<LengthResult>> results =
      evaluate(model, eval_jobs, [&](int k, int l) {
        const double flops = costs[k].eval_flops_at(l);
        if (bar && k == 0) {
          eval_done += flops;
          bar->update(static_cast<int64_t>(eval_done / kFlopsPerUnit),
                      fmt::format("length {}/{}", l, l_max));
        }
        work_done(k, flops);
      });
  if (bar && l_max > 0) bar->finish();
  const double eval_seconds = std::chrono::duration<double>(Clock::now() - eval_start).count();

  // The long-short misalignment at l_train (train/misalignment.hpp), where the task has one.
  std::vector<const ResolvedSpec*> misalign_resolved;
  std::vector<const TrainSpec*> misalign_specs;
  std::vector<bool> diverged;
  for (int k = 0; k < K; ++k) {
    misalign_resolved.push_back(&resolved[k]);
    misalign_specs.push_back(&jobs[k].spec);
    diverged.push_back(outcomes[k].diverged);
  }
  const std::vector<std::optional<Misalignment>> misaligned =
      misalignment(model, misalign_resolved, misalign_specs, diverged);

  std::vector<int> codes(K, kExitOk);
  for (int k = 0; k < K; ++k) {
    if (const auto& m = misaligned[k])
      folders[k]->manifest()["misalignment"] = {{"value", m->value},
                                                {"measure", m->kind},
                                                {"suffix_lengths", {m->l_lo, m->l_hi}},
                                                {"pairs", m->n_pairs}};
    if (outcomes[k].diverged) {
      folders[k]->write_diverged(outcomes[k]);
      codes[k] = kExitDiverged;
      continue;
    }
    const auto params = model.parameters(k);
    folders[k]->write_completed(outcomes[k], results[k], eval_seconds,
                                std::vector<float>(params.begin(), params.end()));
  }
  return codes;
}

}  // namespace lenlab
