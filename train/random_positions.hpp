#pragma once
// Randomized positions (Ruoss et al. 2023, "Randomized positional encodings boost length
// generalization of transformers", cited by ../shared/papers/000): every sequence of n tokens
// gets as position ids a sorted uniformly random n-subset of 0..N−1 instead of 0..n−1, in
// training and in testing alike (as their reference code does: the model sees the same kind of
// positions at every length), so that the positions of test lengths up to N were all seen in
// training. Positions are batch data (tasks/batch.hpp), so learned tables, RoPE, ALiBi and
// distance caps read them as they are; NoPE has none to randomize.
#include <cstdint>
#include <string>

#include "core/rng.hpp"
#include "tasks/batch.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

// UsageError, naming the flag, the value and what is allowed: N < 0; N > 0 with NoPE (no
// positions); N below the token count of the longest test sequence (l_test) or training one.
void check_random_positions(int n_positions, const std::string& pe, TaskKind task,
                            const TokenTaskSettings& token, int l_train, int l_test);

// Replaces every sequence's positions with a sorted random subset of 0..n_positions−1 of its
// size (std::invalid_argument when a sequence is longer than n_positions). A sequence of exactly
// n_positions tokens keeps 0..n_positions−1.
void randomize_positions(Batch& batch, int n_positions, Rng& rng);

// The stream of an evaluation set's positions: fixed by the set's seed, the range and the length,
// so every run with the same settings is tested on the same positions.
Rng evaluation_positions_rng(uint64_t eval_seed, int n_positions, int length);

}  // namespace lenlab
