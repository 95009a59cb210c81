#pragma once
// Test pairs that read a learned bias no training step reached (issue: T5 trained as paper 002
// trained it). T5's buckets for distances past the training window get no gradient and stay at
// their initial 0 (models/position_bias.hpp, untrained_distances); a test query then reads 0 for
// those keys where a model trained at that distance would read a learned value. Two uses:
//  * untrained_pair_fraction: how many of a test set's (answer row, key) pairs the attention
//    scores fall into such a distance, after the window and the cap
//    (LengthResult::untrained_pairs);
//  * trained_distance_cap: `--distance-cap trained`, the cap that maps every distance past the
//    trained ones to the largest trained distance, so each pair reads a bucket training reached.
#include <cstdint>
#include <vector>

#include "models/ops/args.hpp"
#include "tasks/batch.hpp"

namespace lenlab {

// The fraction, over every answer row of `b` (the scalar head's read rows and the token rows
// scored with a label) and every key row of its sequence the window admits, of the pairs whose
// distance pos_i − pos_j (after w's cap) is marked in `untrained` [D + 1]; a distance past D
// counts as D's. NaN when `untrained` is empty or `b` has no answer row.
double untrained_pair_fraction(const Batch& b, const ops::AttentionWindow& w,
                               const std::vector<uint8_t>& untrained);

// The largest distance below which every distance is trained: u − 1 for the first untrained
// distance u, or 0 (no cap) when none of 0..D is. UsageError when u ≤ 1: a cap must be >= 1, and
// a model whose bucket for distance 1 never trained has no trained distance to map onto.
int trained_distance_cap(const std::vector<uint8_t>& untrained);

}  // namespace lenlab
