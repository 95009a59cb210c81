#pragma once
// run_group_on<B>: a group of runs (lab/run/run_group.hpp) trained and evaluated together on one
// backend, each written into its own folder (lab/run/run_folder.hpp); instantiated by
// lab/run/device.cpp for the CPU and lab/run/cuda/device_cuda.cpp for the GPU.
// Returns each job's exit code (kExitOk or kExitDiverged, in job order). A manifest records the
// device and how many models trained together; its train_seconds and eval_seconds are the whole
// group's. Throws UsageError (before writing anything) on a bad spec or jobs with different keys,
// and cuda::CudaError when the GPU fails (the folders then hold "running" manifests, which a
// resumed sweep retrains).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "cost/run_cost.hpp"
#include "lab/run/group_validation.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_folder.hpp"
#include "lab/run/run_group.hpp"
#include "models/encodings/encoding_math.hpp"
#include "models/model.hpp"
#include "tasks/text_corpus.hpp"
#include "tasks/token_tasks.hpp"
#include "train/evaluate.hpp"
#include "train/inference_eval.hpp"
#include "train/misalignment.hpp"
#include "train/trainer.hpp"

namespace lenlab {

template <class B>
std::vector<int> run_group_on(const std::vector<GroupJob>& jobs, const std::string& device_label) {
  using Clock = std::chrono::steady_clock;
  const int K = static_cast<int>(jobs.size());
  if (K == 0) return {};
  std::vector<ResolvedSpec> resolved;
  for (const GroupJob& j : jobs) {
    resolved.push_back(j.resolved);
    if (gpu_group_key(j) != gpu_group_key(jobs[0]))
      throw UsageError(
          "runs trained together must share the model shape, positional encoding, steps and "
          "batch size");
    if (j.resolved.float64 != std::is_same_v<typename B::Scalar, double>)
      throw UsageError(fmt::format(
          "--precision {} cannot run on {} (it computes in {})", j.spec.precision, device_label,
          std::is_same_v<typename B::Scalar, double> ? "float64" : "float32"));
  }
  // A text run's corpus, pinned for the whole group: training, evaluation and the manifest's hash
  // use the bytes read now, even if the file is replaced while the group trains. The model was
  // sized from the corpus read at admission: a file that changed since has another vocabulary.
  std::vector<std::unique_ptr<CorpusPin>> corpus_pins;
  for (const GroupJob& j : jobs) {
    if (!task_reads_corpus(j.resolved.task)) continue;
    corpus_pins.push_back(std::make_unique<CorpusPin>(j.spec.token.corpus));
    const int vocab = token_vocab_size(j.resolved.task, j.spec.token);
    if (vocab != j.resolved.model.vocab_size)
      throw UsageError(fmt::format(
          "corpus {} changed while the run was being set up: it now makes a vocabulary of {} "
          "tokens, the model was sized for {}; start the run again",
          corpus_pins.back()->corpus()->path(), vocab, j.resolved.model.vocab_size));
  }
  // Jobs that differ only in their test-time attention (training_spec_text) share one trained
  // model: job k is evaluated on model slot_of[k]; trainer_of[m] is the first job of model m.
  std::vector<int> slot_of(K), trainer_of;
  {
    std::map<std::string, int> slot_by_training;
    for (int k = 0; k < K; ++k) {
      const auto [it, fresh] = slot_by_training.emplace(training_spec_text(jobs[k].spec),
                                                        static_cast<int>(trainer_of.size()));
      if (fresh) trainer_of.push_back(k);
      slot_of[k] = it->second;
    }
  }
  const int M = static_cast<int>(trainer_of.size());
  const ModelConfig& config = resolved[0].model;
  Model<B> model(config, M);
  for (int m = 0; m < M; ++m) {
    const TrainSpec& spec = jobs[trainer_of[m]].spec;
    model.init(m, spec.seed);
    if (spec.init_from.empty()) continue;
    // Fine-tuning: the parent's weights over the fresh ones (lab/run/init_from.hpp)
    const auto fresh = model.parameters(m);
    const std::vector<double> start =
        parent_weights(load_parent(spec), config, std::vector<double>(fresh.begin(), fresh.end()));
    const std::vector<typename B::Scalar> as_t(start.begin(), start.end());
    model.set_parameters(m, as_t.data());
  }
  std::vector<std::unique_ptr<RunFolder>> folders;
  for (int k = 0; k < K; ++k) {
    folders.push_back(std::make_unique<RunFolder>(jobs[k].spec, resolved[k], jobs[k].options,
                                                  device_label, model.num_parameters()));
    if (B::kDevice) folders.back()->manifest()["models_trained_together"] = M;
    if (M < K)  // how many runs this one's training served
      folders.back()->manifest()["runs_sharing_training"] =
          std::count(slot_of.begin(), slot_of.end(), slot_of[k]);
  }
  for (int k = 0; k < K; ++k) folders[k]->write_init(model.parameters(slot_of[k]));
  std::vector<RunCost> costs;
  for (int k = 0; k < K; ++k) costs.push_back(estimate_run_cost(jobs[k].spec, resolved[k].model));
  auto work_done = [&](int k, double flops) {
    if (jobs[k].options.on_work_done) jobs[k].options.on_work_done(flops);
  };
  // A group of one (`lenlab train`) shows progress bars for its training and its evaluation.
  std::ostream* log = K == 1 ? jobs[0].options.log : nullptr;
  std::optional<Progress> bar;

  // ---- training: every model in lockstep. A shared model's steps count as the training work of
  // each run it serves, as the sweep's progress bar estimated them.
  std::vector<TrainJob> train_jobs;
  for (int m = 0; m < M; ++m) {
    TrainJob job{&jobs[trainer_of[m]].spec, &resolved[trainer_of[m]], {}};
    std::vector<BatchLog*> logs;  // of every run this training serves that asked for one
    for (int k = 0; k < K; ++k)
      if (slot_of[k] == m && folders[k]->batch_log()) logs.push_back(folders[k]->batch_log());
    if (!logs.empty())
      job.on_batch = [logs](int step, const Batch& batch, const double* f_targets) {
        for (BatchLog* log : logs) log->append(step, batch, f_targets);
      };
    train_jobs.push_back(std::move(job));
  }
  // --until-fit's checks and --validate's score (lab/run/group_validation.hpp).
  GroupValidation<B> validation(jobs, trainer_of);
  if (log) bar.emplace("train", jobs[0].spec.steps, *log, jobs[0].options.log_is_tty);
  const std::vector<TrainOutcome> outcomes = train(
      model, train_jobs,
      [&](int m, int step, double loss) {
        if (bar && m == 0) bar->update(step, fmt::format("loss {:.3e}", loss));
        for (int k = 0; k < K; ++k)
          if (slot_of[k] == m) work_done(k, costs[k].train_step_flops);
      },
      validation.stop_check(model));
  if (bar) bar->finish();
  validation.validate_trained(model, outcomes);

  // ---- evaluation: every run whose model did not diverge, at every length, through the inference
  // path. Rounds: round r evaluates, for every model, the r-th run it serves, all models at once.
  const auto eval_start = Clock::now();
  std::vector<EvalJob> eval_jobs;
  std::vector<TemperatureChoice> temperatures(K);
  int l_max = 0;
  for (int k = 0; k < K; ++k) {
    const TrainSpec& s = jobs[k].spec;
    EvalJob job = eval_job(resolved[k], s);
    if (outcomes[slot_of[k]].diverged) job.lengths.clear();
    // An auto temperature is searched on this run's model alone (train/inference_eval.hpp).
    // The weights, where the encoding has entries training may leave untouched (T5's buckets).
    std::vector<double> trained;
    if (encoding_math(config.pe).zero_until_trained) {
      const auto p = model.parameters(slot_of[k]);
      trained.assign(p.begin(), p.end());
    }
    temperatures[k] = prepare_test_time_eval(job, s, config, trained, [&](const EvalJob& j) {
      std::vector<EvalJob> one(M);
      for (EvalJob& other : one) other = scalar_job(j.task, j.reparam, {}, 1, 0);
      one[slot_of[k]] = j;
      return evaluate(model, one)[slot_of[k]];
    });
    // Set after the temperature search, whose trial evaluations are not the run's results.
    job.on_result = jobs[k].options.on_result;
    if (!job.lengths.empty()) {
      work_done(k, costs[k].temperature_search_flops);
      l_max = std::max(l_max, job.lengths.back());
    }
    eval_jobs.push_back(std::move(job));
  }
  // The bar counts work, not lengths: a long test length costs more than all short ones.
  double eval_done = 0;
  if (log && l_max > 0) {
    bar.emplace("eval", static_cast<int64_t>(costs[0].eval_flops / kFlopsPerProgressUnit) + 1, *log,
                jobs[0].options.log_is_tty);
    bar->show_counts(false);
  }
  std::vector<std::vector<LengthResult>> results(K);
  for (int round = 0;; ++round) {
    std::vector<int> job_of(M, -1);  // the run model m is evaluated for in this round
    std::vector<int> seen(M, 0);
    for (int k = 0; k < K; ++k)
      if (seen[slot_of[k]]++ == round) job_of[slot_of[k]] = k;
    if (std::all_of(job_of.begin(), job_of.end(), [](int k) { return k < 0; })) break;
    // Models packed together share one window; a cap resolved on each model ("trained") may
    // differ between them, so each distinct cap is its own pass.
    std::vector<int> caps;
    for (int m = 0; m < M; ++m)
      if (job_of[m] >= 0) caps.push_back(eval_jobs[job_of[m]].attention.window.max_distance);
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    for (const int cap : caps) {
      std::vector<EvalJob> round_jobs(M);
      std::vector<int> in_pass(M, -1);
      for (int m = 0; m < M; ++m) {
        const bool here =
            job_of[m] >= 0 && eval_jobs[job_of[m]].attention.window.max_distance == cap;
        in_pass[m] = here ? job_of[m] : -1;
        round_jobs[m] = here ? eval_jobs[job_of[m]]
                             : scalar_job(eval_jobs[0].task, eval_jobs[0].reparam, {}, 1, 0);
      }
      // An empty job's spec is plain; a pass's jobs must all carry the window of its runs.
      for (int m = 0; m < M; ++m)
        if (in_pass[m] < 0)
          for (int o = 0; o < M; ++o)
            if (in_pass[o] >= 0) {
              round_jobs[m].attention = eval_jobs[in_pass[o]].attention;
              break;
            }
      const std::vector<std::vector<LengthResult>> round_results =
          evaluate(model, round_jobs, [&](int m, int l) {
            const int k = in_pass[m];
            const double flops = costs[k].eval_flops_at(l);
            if (bar && k == 0) {
              eval_done += flops;
              bar->update(static_cast<int64_t>(eval_done / kFlopsPerProgressUnit),
                          fmt::format("length {}/{}", l, l_max));
            }
            work_done(k, flops);
          });
      for (int m = 0; m < M; ++m)
        if (in_pass[m] >= 0) results[in_pass[m]] = round_results[m];
    }
  }
  if (bar && l_max > 0) bar->finish();
  const double eval_seconds = std::chrono::duration<double>(Clock::now() - eval_start).count();

  // The long-short misalignment at l_train (train/misalignment.hpp), where the task has one: a
  // property of the trained model, measured once per model.
  std::vector<const ResolvedSpec*> misalign_resolved;
  std::vector<const TrainSpec*> misalign_specs;
  std::vector<bool> diverged;
  for (int m = 0; m < M; ++m) {
    misalign_resolved.push_back(&resolved[trainer_of[m]]);
    misalign_specs.push_back(&jobs[trainer_of[m]].spec);
    diverged.push_back(outcomes[m].diverged);
  }
  const std::vector<std::optional<Misalignment>> misaligned =
      misalignment(model, misalign_resolved, misalign_specs, diverged);

  std::vector<int> codes(K, kExitOk);
  for (int k = 0; k < K; ++k) {
    const int m = slot_of[k];
    if (const auto& mis = misaligned[m])
      folders[k]->manifest()["misalignment"] = misalignment_json(*mis);
    add_temperature_json(folders[k]->manifest(), temperatures[k]);
    validation.write(folders[k]->manifest(), m, outcomes[m]);
    // What a distance cap came to in tokens ("train" the window's, "trained" the model's own).
    if (!jobs[k].spec.test_attention.distance_cap.empty() && !eval_jobs[k].lengths.empty())
      folders[k]->manifest()["distance_cap_applied"] = eval_jobs[k].attention.window.max_distance;
    if (outcomes[m].diverged) {
      folders[k]->write_diverged(outcomes[m]);
      codes[k] = kExitDiverged;
      continue;
    }
    const auto params = model.parameters(m);
    folders[k]->write_completed(outcomes[m], results[k], eval_seconds,
                                std::vector<double>(params.begin(), params.end()));
  }
  return codes;
}

}  // namespace lenlab
