#pragma once
// What a run will cost, estimated from its settings before anything starts: its peak memory and
// its work, so that a run (or a sweep of runs) that cannot fit is refused with the estimate, and
// long work announces how long it will take.
//
// Memory counts what the engine allocates and keeps: the parameters with their gradients and
// AdamW moments, the training forward's activations and attention probabilities for the largest
// batch (kept until the run ends), the inference scratch for the largest evaluation forward, the
// evaluation set of the longest length, the loss log and the files' text. Work counts the
// floating-point operations of the matrix products and of attention (layer norms, GELU and the
// optimizer are O(tokens·d) and left out): a training step is three forwards (forward, and a
// backward of twice its cost); an evaluation is one inference forward per test sequence.
#include <cstdint>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// One part of a cost, with the settings that drive it (flag names), for messages that say what
// to change.
struct CostPart {
  std::string what;       // e.g. "evaluation at the longest length"
  double amount = 0;      // bytes or FLOPs
  std::string settings;   // e.g. "--l-test 400, --eval-samples 500"
  bool training = false;  // needed by training only: an evaluation of a trained run leaves it out
};

struct RunCost {
  double peak_bytes = 0;  // host memory on the CPU; on a GPU the device's (per group: K × this)
  std::vector<CostPart> memory_parts;  // they sum to peak_bytes
  std::vector<CostPart> work_parts;    // training, evaluation: they sum to flops()
  double train_flops = 0;              // every training step
  double train_attention_flops = 0;    // attention's part of train_flops (cost/time_model.hpp)
  double fit_check_flops = 0;  // --until-fit's validation checks at most, part of train_flops
  double eval_flops = 0;       // every test length, and the temperature search
  // temperature = auto-pmax / auto-entropy: paper 002's search before the evaluation
  // (train/inference_eval.hpp), part of eval_flops.
  double temperature_search_flops = 0;
  double greedy_flops = 0;  // greedy decoding's pass (--decode greedy), part of eval_flops
  double flops() const { return train_flops + eval_flops; }
  // Work per step and per test length: what a progress bar counts.
  double train_step_flops = 0;
  double eval_flops_at(int length) const;

  ModelConfig model;  // what eval_flops_at depends on
  int eval_samples = 0;
  TaskKind task = TaskKind::kLength;
  TokenTaskSettings token;
  int n_depths = 1;  // passkey: test sets per length
};

// `model` is resolve(spec).model. Pure arithmetic in double: never overflows, whatever the sizes.
RunCost estimate_run_cost(const TrainSpec& spec, const ModelConfig& model);

// One run as cost/ sees it, worked out once: its settings resolved (resolve(), UsageError naming
// the first bad one) and its estimate. The budget, the dry run and the time model read it; the
// admitted run trains from it (cost/admission.hpp), so nothing resolves a run twice.
struct CostedRun {
  TrainSpec spec;
  ResolvedSpec resolved;
  RunCost cost;
  // A spec resolved and costed (implicit: a list of specs is a list of costed runs).
  CostedRun(TrainSpec s)  // NOLINT(google-explicit-constructor)
      : spec(std::move(s)),
        resolved(resolve(spec)),
        cost(estimate_run_cost(spec, resolved.model)) {}
  CostedRun(TrainSpec s, ResolvedSpec r)
      : spec(std::move(s)), resolved(std::move(r)), cost(estimate_run_cost(spec, resolved.model)) {}
};

// Rough sustained rates, for budget checks, for deciding which work is long enough to announce,
// and for the GPU's announcement: below what lenlab_bench measures of the work counted here on one
// core of the 2-core development machine (55 to 95 GFLOP/s over the days), and what an H100
// reaches on groups of models (~1 TFLOP/s). An estimate within a factor of 2 or 3 is enough to tell
// a minute from a day; `--dry-run` and the CPU's announcement of long work predict from this
// machine's measured speed instead (cost/time_model.hpp).
inline constexpr double kCpuFlopsPerSecondPerThread = 50e9;
inline constexpr double kGpuFlopsPerSecond = 1e12;
// A GPU training step of these tiny models is bound by its kernel launches, not its FLOPs: one
// model's step took 1.1 to 1.2 ms on an H100 (829 steps/s for the default model, 946 for a d_model
// 8 one; lenlab_cuda_bench and `lenlab train --device cuda`, 2026-11-26), and a group of 96 models
// 4.9 ms. Without this floor a FLOP rate alone promised 100 000 steps in under a second.
inline constexpr double kGpuSecondsPerStep = 1e-3;
// The GPU's time for `flops` of work and `steps` training steps (in lockstep: a group's steps).
inline double gpu_seconds(double flops, double steps) {
  return flops / kGpuFlopsPerSecond + steps * kGpuSecondsPerStep;
}

}  // namespace lenlab
