#include "train/eval_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "tasks/task.hpp"
#include "train/lengths.hpp"

namespace lenlab {

void check_eval_changes(const EvalChanges& c) {
  if (!c.lengths.empty()) parse_lengths(c.lengths, "--lengths", kMaxLength);
  if (!c.depths.empty()) parse_depths(c.depths, "--depths");
  check_temperature(c.attention.temperature);
  check_decode(c.attention.decode);
  search_grid(c.attention);
}

EvalPlan plan_evaluation(const TrainSpec& trained, const EvalChanges& c,
                         const std::string& source) {
  // The model as it was trained: a setting it cannot have is the manifest's mistake.
  ResolvedSpec as_trained = in_source(source, [&] { return resolve(trained); });
  const ModelConfig& config = as_trained.model;
  TrainSpec spec = trained;
  if (!c.lengths.empty()) {
    spec.lengths = c.lengths;
    spec.l_test = std::max(trained.l_test, test_lengths(spec).back());
  }
  if (c.samples != 0) spec.eval_samples = c.samples;
  if (c.has_eval_seed) spec.eval_seed = c.eval_seed;
  if (c.threads != 0) spec.threads = c.threads;
  if (!c.depths.empty()) {
    if (trained.task != "passkey")
      throw UsageError(
          fmt::format("--depths applies to passkey runs; this run's task is '{}'", trained.task));
    spec.depths = c.depths;
  }
  if (spec.random_positions > 0) {  // before resolve(), whose message would say to raise it
    const std::vector<int> wanted = test_lengths(spec);
    const TaskKind task = parse_task(spec.task);
    int longest = wanted.back();
    while (longest > 1 && tokens_per_sequence(task, spec.token, longest) > spec.random_positions)
      --longest;
    if (longest < wanted.back())
      throw UsageError(fmt::format(
          "--lengths: the run was trained with --random-positions {} (position ids 0..{}), so it "
          "cannot evaluate length {}, which has {} tokens; choose lengths up to {}",
          spec.random_positions, spec.random_positions - 1, wanted.back(),
          tokens_per_sequence(task, spec.token, wanted.back()), longest));
  }
  // resolve() checks the lengths, the number of test sequences, the threads, and the reparam on
  // every target the new lengths reach (its inverse is applied to every output).
  ResolvedSpec resolved = resolve(spec);
  const std::vector<int>& lengths = resolved.test_lengths;
  const int64_t needed = tokens_per_sequence(resolved.task, spec.token, lengths.back());
  if (positional_encoding_info(config.pe).learned_table() && needed > config.max_positions) {
    int longest = lengths.back();
    while (longest > 1 &&
           tokens_per_sequence(resolved.task, spec.token, longest) > config.max_positions)
      --longest;
    throw UsageError(fmt::format(
        "--lengths: the run's learned position table has {} rows (trained with --l-test {}), so "
        "it cannot evaluate length {}, which needs {} positions; choose lengths up to {}",
        config.max_positions, trained.l_test, lengths.back(), needed, longest));
  }

  // Inference-side attention methods (train/inference_attention.hpp).
  spec.test_attention = c.attention;
  const AttentionSpec attention = test_time_attention(c.attention, trained, config.pe);
  return EvalPlan{std::move(as_trained), std::move(spec), std::move(resolved), attention};
}

}  // namespace lenlab
