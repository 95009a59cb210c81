#pragma once
// Virtual-context learning (VCL; ../shared/papers/004_35247bee3362e4cb.txt, eq. 8 and 25): the
// loss only on the tokens after an offset, the earlier ones in the forward pass only, and its
// mixture with the plain loss,
//   L = α·L_plain + (1 − α)·L_VCL.
// In lenlab it is data: the token tasks' answer-row weights (tasks/token_tasks.hpp). Answer row
// r at row i of its sequence predicts the sequence's token i + 1 (BOS is token 0); it counts in
// L_VCL when i + 1 > offset. As the plain loss gives each sequence weight 1/S spread over its
// answer rows, L_VCL gives each of the S' sequences with a counted row weight 1/S' spread over
// those rows (a batch without any has L_VCL = 0). Offset 0 counts every row: the plain loss.
#include <compare>

#include "tasks/batch.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

struct VclSettings {
  int offset = 0;      // 0: off (every answer row counts)
  double alpha = 0.0;  // weight of the plain loss in the mixture; 0: L_VCL alone
  auto operator<=>(const VclSettings&) const = default;
};

// UsageError, naming the flag, the value and what is allowed: offset < 0; alpha outside [0, 1]
// or given without an offset; an offset on a scalar task (one output per sequence: no tokens to
// leave out); an offset that leaves no answer row with loss at the longest training length
// (l_train) while alpha < 1.
void check_vcl(const VclSettings& vcl, TaskKind task, const TokenTaskSettings& token, int l_train);

// Re-weights batch.token.weights as above (the batch as token_train_batch builds it).
void apply_vcl(Batch& batch, const VclSettings& vcl);

}  // namespace lenlab
