#pragma once
// Virtual-context learning (VCL; ../shared/papers/004_35247bee3362e4cb.txt, eq. 8 and 25): the
// loss only on the tokens after an offset, the earlier ones in the forward pass only, and its
// mixture with the plain loss,
//   L = α·L_plain + (1 − α)·L_VCL.
// In lenlab it is data: the token tasks' answer-row weights (tasks/token_tasks.hpp), and, by the
// prefix kind, rows of the batch marked for the model (tasks/batch.hpp). Answer row
// r at row i of its sequence predicts the sequence's token i + 1 (BOS is token 0); it counts in
// L_VCL when i + 1 > offset. As the plain loss gives each sequence weight 1/S spread over its
// answer rows, L_VCL gives each of the S' sequences with a counted row weight 1/S' spread over
// those rows (a batch without any has L_VCL = 0). Offset 0 counts every row: the plain loss.
//
// The prefix: rows 0 .. offset − 1 of a sequence (BOS and tokens 1 .. offset − 1), whose
// predictions L_VCL leaves out. Paper 004 (App. H.1, Table 3) treats them three ways:
//  * mask: loss weights only (above); the prefix is computed and trained through as any row.
//  * detach: the prefix rows' keys and values are constants in every attention layer: no gradient
//    reaches a prefix row from a later one (Batch::detached). With α = 0 nothing reaches them at
//    all, and the backward skips their query work. The loss value is mask's.
//  * random: the prefix tokens' embeddings (BOS's excepted, the start marker) are Gaussian draws
//    with the per-feature mean and variance of the rows offset .. end, the ones L_VCL counts, of
//    the batch's OTHER sequences (a sequence's own would tell it the tokens it is to predict:
//    models/ops/prefix_noise.hpp; gradients through μ and σ). A sequence no longer than the
//    prefix keeps its tokens.
// Each combines with α as eq. 25: the weights are mask's in all three.
#include <compare>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "tasks/batch.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

struct VclSettings {
  int offset = 0;               // 0: off (every answer row counts)
  double alpha = 0.0;           // weight of the plain loss in the mixture; 0: L_VCL alone
  std::string prefix = "mask";  // mask, detach or random (above)
  auto operator<=>(const VclSettings&) const = default;
};

enum class VclPrefix { kMask, kDetach, kRandom };
const std::vector<std::string>& vcl_prefix_names();  // mask, detach, random
// UsageError naming the value and the choices.
VclPrefix parse_vcl_prefix(const std::string& name);

// UsageError, naming the flag, the value and what is allowed: offset < 0; alpha outside [0, 1]
// or given without an offset; an offset on a scalar task (one output per sequence: no tokens to
// leave out); an offset that leaves no answer row with loss at the longest training length
// (l_train) while alpha < 1; a prefix kind but mask without an offset (or an unknown one).
void check_vcl(const VclSettings& vcl, TaskKind task, const TokenTaskSettings& token, int l_train);

// Re-weights batch.token.weights as above (the batch as token_train_batch builds it) and marks
// the prefix rows of detach and random; random's draws are seeded from `rng`.
void apply_vcl(Batch& batch, const VclSettings& vcl, Rng& rng);

}  // namespace lenlab
