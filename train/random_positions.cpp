#include "train/random_positions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "models/positional_encodings.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

void check_random_positions(int n_positions, const std::string& pe, TaskKind task,
                            const TokenTaskSettings& token, int l_train, int l_test) {
  if (n_positions == 0) return;
  if (n_positions < 0)
    throw UsageError(fmt::format(
        "--random-positions (random_positions) must be >= 0 (0: off), got {}", n_positions));
  // An encoding that reads no position (its row has no hook: NoPE) has none to randomize; pe is
  // checked by resolve() first.
  const PositionalEncodingInfo& info = positional_encoding_info(parse_positional_encoding(pe));
  if (!info.absolute() && !info.relative())
    throw UsageError(
        fmt::format("--random-positions {}: --pe {} reads no positions, so it has none to "
                    "randomize; use it with "
                    "an encoding that reads them",
                    n_positions, pe));
  const int64_t longest = tokens_per_sequence(task, token, std::max(l_train, l_test));
  if (n_positions < longest)
    throw UsageError(fmt::format(
        "--random-positions {} is fewer positions than the longest sequence has tokens ({} at "
        "length {}); give at least {}",
        n_positions, longest, std::max(l_train, l_test), longest));
}

void randomize_positions(Batch& batch, int n_positions, Rng& rng) {
  for (int s = 0; s < batch.n_seq(); ++s) {
    const int begin = batch.offsets[s], n = batch.offsets[s + 1] - begin;
    if (n > n_positions)
      throw std::invalid_argument(fmt::format(
          "randomize_positions: a sequence of {} tokens in {} positions", n, n_positions));
    // Selection sampling (Knuth's Algorithm S): position p is taken with probability
    // (still needed)/(still available), which gives every n-subset the same chance, in order.
    int taken = 0;
    for (int p = 0; p < n_positions && taken < n; ++p)
      if (rng.uniform_int(0, n_positions - p - 1) < n - taken) batch.positions[begin + taken++] = p;
  }
}

Rng evaluation_positions_rng(uint64_t eval_seed, int n_positions, int length) {
  // Its own seed: the evaluation set's sequences come from Rng::stream(eval_seed, length).
  return Rng::stream(Rng(eval_seed ^ 0x52414E44504F53ULL).next_u64() + n_positions, length);
}

}  // namespace lenlab
