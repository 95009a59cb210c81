#pragma once
// A packed batch: variable-length sequences stored back to back, no padding.
// Sequence s occupies tokens[offsets[s] .. offsets[s+1]) and reads [BOS, b_1 .. b_l, EOS],
// so it has l + 2 tokens. The model's linear layers run on all n_tokens() rows at once;
// attention runs per sequence.
#include <cstdint>
#include <vector>

namespace lenlab {

enum Token : int32_t { kZero = 0, kOne = 1, kBos = 2, kEos = 3 };
inline constexpr int kVocabSize = 4;

struct Batch {
  std::vector<int32_t> tokens;   // [n_tokens]
  std::vector<int32_t> offsets;  // [n_seq + 1], offsets[0] = 0, offsets[n_seq] = n_tokens
  std::vector<double> targets;   // [n_seq] y, in the task's original space (before any reparam)
  std::vector<double> weights;   // [n_seq] probability of each sequence; empty = equal weights

  int n_seq() const { return static_cast<int>(targets.size()); }
  int n_tokens() const { return static_cast<int>(tokens.size()); }
  int seq_len(int s) const { return offsets[s + 1] - offsets[s]; }  // tokens incl. BOS and EOS
  int max_seq_len() const {
    int m = 0;
    for (int s = 0; s < n_seq(); ++s) m = seq_len(s) > m ? seq_len(s) : m;
    return m;
  }
};

}  // namespace lenlab
