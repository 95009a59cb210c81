// The part of lab/gpu_runs.hpp every build has (the training itself is in lab/cuda/, built with
// the CUDA backend only).
#include "lab/gpu_runs.hpp"

#include <fmt/format.h>

#include "tasks/token_tasks.hpp"

namespace lenlab {

std::string gpu_group_key(const TrainSpec& spec) {
  // The task fixes the vocabulary and the heads; a learned table has as many rows as the longest
  // test sequence has tokens.
  const TaskKind task = parse_task(spec.task);
  const TokenTaskSettings& token = spec.token;
  const bool learned = spec.pe == "learned";
  const bool heads = is_token_task(task);
  const int vocab = heads ? token_vocab_size(task, token) : task_vocab_size(task);
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", spec.n_layer, spec.d_model, spec.n_head,
                     spec.d_ff, spec.pe, heads ? "token" : "scalar", vocab,
                     learned ? tokens_per_sequence(task, token, spec.l_test) : 0, spec.steps,
                     spec.batch_size);
}

}  // namespace lenlab
