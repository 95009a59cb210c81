#include "cost/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cost/run_cost.hpp"

namespace lenlab {

namespace {

// A lower bound of the evaluation's FLOPs (RunCost::eval_flops_at grows with the length): the
// default lengths first..l_test in halves (hi/2, hi], each costed at its shortest; a --lengths
// list length by length. nullopt when the settings cannot be costed.
std::optional<double> eval_flops_floor(const TrainSpec& spec) {
  if (spec.l_train < 1 || spec.l_test < spec.l_train || spec.l_test > kMaxLength ||
      spec.eval_samples < 1)
    return std::nullopt;  // resolve() says what is wrong
  try {
    RunCost cost;
    cost.model = model_config(spec);
    cost.eval_samples = spec.eval_samples;
    cost.task = parse_task(spec.task);
    cost.token = spec.token;
    double flops = 0;
    if (!spec.lengths.empty()) {
      for (const int l : test_lengths(spec)) flops += cost.eval_flops_at(l);
      return flops;
    }
    const int first = shortest_length(cost.task, spec.token);
    for (int hi = spec.l_test; hi >= first;) {
      const int lo = std::max(first, hi / 2 + 1);
      flops += (hi - lo + 1) * cost.eval_flops_at(lo);
      hi = lo - 1;
    }
    return flops;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Throws when the floor of `specs`' evaluations, on `cpu_threads` threads or the GPU (as admit()
// costs the work: cost/budget.cpp), is over --max-time. `what`: "this run", "this sweep of N runs".
void refuse_over_time(const std::vector<TrainSpec>& specs, int cpu_threads, bool gpu,
                      const Budget& budget, const std::string& what) {
  WorkEstimate e;
  const TrainSpec* heaviest = nullptr;
  double most = -1;
  for (const TrainSpec& spec : specs) {
    const std::optional<double> flops = eval_flops_floor(spec);
    if (!flops) continue;
    e.flops += *flops;
    if (*flops > most) most = *flops, heaviest = &spec;
  }
  if (!heaviest || cpu_threads < 1) return;
  e.seconds = gpu ? gpu_seconds(e.flops, 0) : e.flops / (kCpuFlopsPerSecondPerThread * cpu_threads);
  e.where = gpu ? "the GPU"
                : fmt::format("{} CPU {}{}", cpu_threads, specs.size() > 1 ? "worker" : "thread",
                              cpu_threads > 1 ? "s" : "");
  e.time_limit = parse_duration(budget.max_time, "--max-time");
  if (e.seconds <= e.time_limit) return;
  const TrainSpec& h = *heaviest;
  const std::string lengths = h.lengths.empty() ? fmt::format("--l-test {}", h.l_test)
                                                : fmt::format("--lengths {}", h.lengths);
  throw UsageError(fmt::format(
      "{} would take at least {} ({} on {}) for {} alone, more than --max-time {}; {} set by {}, "
      "--eval-samples {}, --d-model {}, --d-ff {}, --n-layer {}: lower those, or raise --max-time",
      what, e.time_text(), format_flops(e.flops), e.where,
      specs.size() > 1 ? "its evaluations" : "its evaluation", budget.max_time,
      specs.size() > 1 ? "the heaviest run's is" : "it is", lengths, h.eval_samples, h.d_model,
      h.d_ff, h.n_layer));
}

}  // namespace

void preflight_run(const TrainSpec& spec, const Budget& budget, bool gpu) {
  refuse_over_time({spec}, spec.threads, gpu, budget, "this run");
}

void preflight_sweep(const std::vector<TrainSpec>& runs, int jobs, const Budget& budget, bool gpu) {
  if (runs.empty()) return;
  // Workers as check_sweep_budget counts them: the `jobs` runs side by side.
  const int workers = std::max(1, std::min(jobs, static_cast<int>(runs.size())));
  refuse_over_time(runs, workers, gpu, budget, fmt::format("this sweep of {} runs", runs.size()));
}

}  // namespace lenlab
