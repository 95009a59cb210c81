#pragma once
// A step's input, as data: a packed batch of variable-length sequences stored back to back (no
// padding), each token's position, and which rows each head reads with what target and loss
// weight. Every method this lab compares differs only in these fields and in how the model attends
// over them (models/attention_spec.hpp, given beside the batch).
// Sequence s occupies rows offsets[s] .. offsets[s+1]; the synthetic tasks' sequences read
// [BOS, b_1 .. b_l, EOS] (l + 2 tokens) and the scalar head reads the EOS row.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lenlab {

enum Token : int32_t { kZero = 0, kOne = 1, kBos = 2, kEos = 3 };
inline constexpr int kVocabSize = 4;  // the synthetic tasks' vocabulary

// Pairs of the token readout's rows whose two next-token distributions a loss pulls together:
// weight · SCE(softmax z_first, softmax z_second), the symmetric cross-entropy (the misalignment
// regularizer, train/misalign_regularizer.hpp). first and second index TokenReadout::rows; a
// readout row is in at most one pair.
// Pair p's loss is weights[p]·(KL(p‖q) + KL(q‖p)) + entropy_weights[p]·(H(p) + H(q)) of its two
// rows' next-token distributions p, q (models/cpu/loss.hpp, pair_alignment_loss): equal weights
// give paper 000's symmetric cross-entropy (eq. 1), entropy weights 0 the divergence alone.
struct ReadoutPairs {
  std::vector<int32_t> first;           // [P]
  std::vector<int32_t> second;          // [P]
  std::vector<double> weights;          // [P]
  std::vector<double> entropy_weights;  // [P]
  int size() const { return static_cast<int>(first.size()); }
};

// The token head's readout: logits at `rows`, cross-entropy against `labels` (a label < 0: no
// cross-entropy, the row is read for its pair only), weighted; and the pairs' loss.
struct TokenReadout {
  std::vector<int32_t> rows;    // [R] rows of the batch
  std::vector<int32_t> labels;  // [R] target token ids, or −1
  std::vector<double> weights;  // [R] loss weights
  ReadoutPairs pairs;
  int size() const { return static_cast<int>(rows.size()); }
};

struct Batch {
  std::vector<int32_t> tokens;     // [n_tokens]
  std::vector<int32_t> positions;  // [n_tokens] position ids; 0, 1, … within each sequence
  std::vector<int32_t> offsets;    // [n_seq + 1], offsets[0] = 0, offsets[n_seq] = n_tokens
  // The scalar head's readout: row read_rows[r] has target y_r (in the task's original space,
  // before any reparam) and weight w_r, the row's probability or loss weight; empty weights =
  // equal weights 1/R.
  std::vector<int32_t> read_rows;  // [R]
  std::vector<double> targets;     // [R]
  std::vector<double> weights;     // [R] or empty
  TokenReadout token;              // the token head's readout (empty: no token loss)
  // VCL's prefix kinds (train/vcl.hpp), each [n_tokens] or empty (none): detached, 1 at a row
  // whose keys and values pass no gradient; prefix_noise, each row's ops::PrefixNoiseCode
  // (models/ops/prefix_noise.hpp), its kNoiseRow rows' Gaussian draws seeded by noise_seed.
  std::vector<int32_t> detached;
  std::vector<int32_t> prefix_noise;
  uint64_t noise_seed = 0;

  int n_seq() const { return offsets.empty() ? 0 : static_cast<int>(offsets.size()) - 1; }
  int n_tokens() const { return static_cast<int>(tokens.size()); }
  int n_read() const { return static_cast<int>(read_rows.size()); }
  int seq_len(int s) const { return offsets[s + 1] - offsets[s]; }  // tokens incl. BOS and EOS
  int max_seq_len() const {
    int m = 0;
    for (int s = 0; s < n_seq(); ++s) m = seq_len(s) > m ? seq_len(s) : m;
    return m;
  }
  // The weight of scalar readout r: weights[r], or 1/R when weights is empty.
  double weight(int r) const {
    return weights.empty() ? 1.0 / static_cast<double>(n_read()) : weights[r];
  }
};

// Appends one sequence of tokens at positions 0, 1, …, with no readout.
inline void append_tokens(Batch& b, const std::vector<int32_t>& tokens) {
  if (b.offsets.empty()) b.offsets.push_back(0);
  for (size_t i = 0; i < tokens.size(); ++i) {
    b.tokens.push_back(tokens[i]);
    b.positions.push_back(static_cast<int32_t>(i));
  }
  b.offsets.push_back(static_cast<int32_t>(b.tokens.size()));
}

// Appends one sequence of tokens at positions 0, 1, …; its last row is read by the scalar head
// with target y.
inline void append_sequence(Batch& b, const std::vector<int32_t>& tokens, double target) {
  append_tokens(b, tokens);
  b.read_rows.push_back(b.offsets.back() - 1);
  b.targets.push_back(target);
}

// Sequences [begin, end) of `b` as a batch of their own: tokens, positions, offsets, and the
// readouts (scalar and token) whose rows fall in them, renumbered.
Batch slice_batch(const Batch& b, int begin, int end);

}  // namespace lenlab
