#include "train/vcl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/ops/prefix_noise.hpp"

namespace lenlab {

namespace {

std::vector<std::string> token_tasks() {
  std::vector<std::string> names;
  for (const std::string& n : task_names())
    if (is_token_task(parse_task(n))) names.push_back(n);
  return names;
}

// Batch::detached or Batch::prefix_noise for the prefix rows 0 .. offset − 1 of each sequence.
void mark_prefix(Batch& batch, const VclSettings& vcl, Rng& rng) {
  const VclPrefix prefix = parse_vcl_prefix(vcl.prefix);
  if (prefix == VclPrefix::kMask) return;
  const int n = batch.n_tokens();
  std::vector<int32_t>& rows = prefix == VclPrefix::kDetach ? batch.detached : batch.prefix_noise;
  rows.assign(n, 0);
  for (int s = 0; s < batch.n_seq(); ++s) {
    const int first = batch.offsets[s], L = batch.seq_len(s);
    if (prefix == VclPrefix::kDetach) {
      for (int i = 0; i < std::min(vcl.offset, L); ++i) rows[first + i] = 1;
      continue;
    }
    if (L <= vcl.offset) continue;  // nothing of it counts in L_VCL: its tokens stay
    for (int i = 1; i < vcl.offset; ++i) rows[first + i] = ops::kNoiseRow;
    for (int i = vcl.offset; i < L; ++i) rows[first + i] = ops::kStatsRow;
  }
  if (prefix == VclPrefix::kRandom) batch.noise_seed = rng.next_u64();
}

}  // namespace

const std::vector<std::string>& vcl_prefix_names() {
  static const std::vector<std::string> names = {"mask", "detach", "random"};
  return names;
}

VclPrefix parse_vcl_prefix(const std::string& name) {
  const auto& names = vcl_prefix_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<VclPrefix>(i);
  throw UsageError(fmt::format("--vcl-prefix (vcl_prefix) '{}' is not a prefix kind; choose {}",
                               name, join_choices(names)));
}

void check_vcl(const VclSettings& vcl, TaskKind task, const TokenTaskSettings& token, int l_train) {
  if (vcl.offset < 0)
    throw UsageError(
        fmt::format("--vcl-offset (vcl_offset) must be >= 0 (0: off), got {}", vcl.offset));
  if (!(vcl.alpha >= 0.0 && vcl.alpha <= 1.0))
    throw UsageError(fmt::format(
        "--vcl-alpha (vcl_alpha) must be in [0, 1] (the plain loss's weight), got {}", vcl.alpha));
  const VclPrefix prefix = parse_vcl_prefix(vcl.prefix);
  if (!is_token_task(task) && prefix == VclPrefix::kRandom)
    throw UsageError(fmt::format(
        "--vcl-prefix random: task '{}' reads one output per sequence from its 0/1 symbols; "
        "Gaussian embeddings in place of its first symbols would change the quantity it "
        "predicts. The random prefix applies to the token tasks ({})",
        task_name(task), join_choices(token_tasks())));
  if (vcl.offset == 0) {
    if (prefix != VclPrefix::kMask)
      throw UsageError(fmt::format(
          "--vcl-prefix {} needs --vcl-offset (vcl_offset): the prefix is the tokens before the "
          "offset; give an offset > 0, or leave --vcl-prefix at mask",
          vcl.prefix));
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

void apply_vcl(Batch& batch, const VclSettings& vcl, Rng& rng) {
  if (vcl.offset == 0) return;  // every row counts: the plain weights
  mark_prefix(batch, vcl, rng);
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
