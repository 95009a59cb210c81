#include "train/vcl.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace lenlab {

namespace {

std::vector<std::string> token_tasks() {
  std::vector<std::string> names;
  for (const std::string& n : task_names())
    if (is_token_task(parse_task(n))) names.push_back(n);
  return names;
}

}  // namespace

void check_vcl(const VclSettings& vcl, TaskKind task, const TokenTaskSettings& token, int l_train) {
  if (vcl.offset < 0)
    throw UsageError(
        fmt::format("--vcl-offset (vcl_offset) must be >= 0 (0: off), got {}", vcl.offset));
  if (!(vcl.alpha >= 0.0 && vcl.alpha <= 1.0))
    throw UsageError(fmt::format(
        "--vcl-alpha (vcl_alpha) must be in [0, 1] (the plain loss's weight), got {}", vcl.alpha));
  if (vcl.offset == 0) {
    if (vcl.alpha != 0.0)
      throw UsageError(fmt::format(
          "--vcl-alpha {} has no effect without --vcl-offset (vcl_offset): give an offset > 0, "
          "or leave --vcl-alpha at 0",
          vcl.alpha));
    return;
  }
  if (!is_token_task(task))
    throw UsageError(fmt::format(
        "--vcl-offset {}: task '{}' reads one output per sequence, so there are no earlier tokens "
        "to leave out of the loss; VCL applies to the token tasks ({})",
        vcl.offset, task_name(task), join_choices(token_tasks())));
  // The longest training sequence's last answer row predicts its token n − 1.
  const int64_t last = token_sequence_tokens(task, token, l_train) - 1;
  if (vcl.alpha < 1.0 && vcl.offset >= last)
    throw UsageError(fmt::format(
        "--vcl-offset {} leaves no token with loss: the longest training sequence (--l-train {}) "
        "has tokens up to {}; use an offset below {}",
        vcl.offset, l_train, last, last));
}

void apply_vcl(Batch& batch, const VclSettings& vcl) {
  if (vcl.offset == 0) return;  // every row counts: the plain weights
  const std::vector<int32_t> first = token_readout_offsets(batch);
  const int S = batch.n_seq();
  // Readout r of sequence s counts when it predicts a token past the offset; a row without a label
  // (read for the misalignment regularizer's pairs only) never does.
  auto counts = [&](int r, int s) {
    return batch.token.labels[r] >= 0 && batch.token.rows[r] - batch.offsets[s] + 1 > vcl.offset;
  };
  std::vector<int> counted(S, 0);
  int sequences = 0;  // S'
  for (int s = 0; s < S; ++s) {
    for (int r = first[s]; r < first[s + 1]; ++r) counted[s] += counts(r, s);
    sequences += counted[s] > 0;
  }
  for (int s = 0; s < S; ++s)
    for (int r = first[s]; r < first[s + 1]; ++r) {
      const double w_vcl = counts(r, s) ? 1.0 / (static_cast<double>(sequences) * counted[s]) : 0.0;
      batch.token.weights[r] = vcl.alpha * batch.token.weights[r] + (1.0 - vcl.alpha) * w_vcl;
    }
}

}  // namespace lenlab
