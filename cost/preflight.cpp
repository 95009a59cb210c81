#include "cost/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

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
    const int first = cost.task == TaskKind::kPasskey ? std::max(spec.token.key_length + 1, 1) : 1;
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

}  // namespace

void preflight_run(const TrainSpec& spec, const Budget& budget, bool maybe_gpu) {
  const std::optional<double> flops = eval_flops_floor(spec);
  if (!flops || spec.threads < 1) return;
  WorkEstimate e;
  e.flops = *flops;
  e.seconds = e.flops / (kCpuFlopsPerSecondPerThread * spec.threads);
  e.where = fmt::format("{} CPU thread{}", spec.threads, spec.threads > 1 ? "s" : "");
  if (maybe_gpu && gpu_seconds(e.flops, 0) < e.seconds) {
    e.seconds = gpu_seconds(e.flops, 0);
    e.where = "the GPU";
  }
  e.time_limit = parse_duration(budget.max_time, "--max-time");
  if (e.seconds <= e.time_limit) return;
  const std::string lengths = spec.lengths.empty() ? fmt::format("--l-test {}", spec.l_test)
                                                   : fmt::format("--lengths {}", spec.lengths);
  throw UsageError(fmt::format(
      "this run would take at least {} ({} on {}) for its evaluation alone, more than --max-time "
      "{}; it is set by {}, --eval-samples {}, --d-model {}, --d-ff {}, --n-layer {}: lower "
      "those, or raise --max-time",
      e.time_text(), format_flops(e.flops), e.where, budget.max_time, lengths, spec.eval_samples,
      spec.d_model, spec.d_ff, spec.n_layer));
}

}  // namespace lenlab
