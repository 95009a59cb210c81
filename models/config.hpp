#pragma once
// The model's shape and positional encoding: everything that fixes the parameter layout.
#include <string>
#include <vector>

namespace lenlab {

enum class PositionalEncoding {
  kNope,     // no positional signal: the causal mask alone breaks permutation symmetry
  kLearned,  // GPT-2 style absolute table, one row per position (BOS is position 0)
  kAlibi,    // Press et al.: a per-head linear penalty -m_h·(i - j) on the attention logits
  kRope,     // Su et al.: q and k rotated by position-dependent angles, base 10000
};

PositionalEncoding parse_positional_encoding(const std::string& name);  // throws UsageError
std::string positional_encoding_name(PositionalEncoding pe);
std::vector<std::string> positional_encoding_names();

struct ModelConfig {
  int n_layer = 2;
  int d_model = 64;
  int n_head = 4;
  int d_ff = 256;
  PositionalEncoding pe = PositionalEncoding::kNope;
  // Rows of the learned position table = the longest sequence (BOS + l + EOS tokens) the model can
  // ever see; only used (and required > 0) for kLearned. Sized for l_test at training time.
  int max_positions = 0;
  double rope_base = 10000.0;
  // The vocabulary (rows of the token embedding, columns of the token head): the task's.
  int vocab_size = 4;
  // Which heads the model has (models/heads.hpp): the scalar regression head, the token head
  // (vocabulary-sized logits), or both. A head's parameters exist only when it does.
  bool scalar_head = true;
  bool token_head = false;

  int head_dim() const { return d_model / n_head; }
  // Throws UsageError naming the bad value: non-positive sizes, d_model not divisible by n_head,
  // odd head_dim with RoPE (it rotates pairs), learned PE without a table size, no head.
  void validate() const;
};

}  // namespace lenlab
