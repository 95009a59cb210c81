#pragma once
// The model's shape and positional encoding: everything that fixes the parameter layout.
#include <string>
#include <vector>

#include "models/positional_encodings.hpp"
#include "models/rope_scaling.hpp"

namespace lenlab {

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
  // rope: the context extension the model is trained with (models/rope_scaling.hpp; kNone: plain
  // angles). A batch whose AttentionSpec names one (at test time) uses that instead.
  RopeScaling rope_scaling;
  // t5 (models/position_bias.hpp): n_buckets buckets, half of them exact distances and the rest
  // log-spaced up to max_distance (farther distances share the last); one table shared by the
  // layers as in T5, or one per layer.
  int t5_buckets = 32;
  int t5_max_distance = 128;
  bool t5_per_layer = false;
  // fire: its threshold L at the start, in tokens (resolve() sets the training window), and the
  // MLP's hidden width.
  double fire_threshold = 16.0;
  int fire_width = 32;
  // bias: the user's fixed bias b(d, h), a muparser expression in the distance d ≥ 0 and the head
  // index h (e.g. "-(h+1)/8*log(1+d)"); empty for every other encoding.
  std::string pe_bias;
  // The token embedding's multiplier: out[t] = embedding_scale·wte[token_t] + a position table's
  // row (1: GPT-2's, lenlab's default; √d_model: Vaswani et al.'s §3.4 and Ruoss et al.'s code,
  // which keep the token embedding as large as a fixed sin/cos table).
  double embedding_scale = 1.0;
  // The vocabulary (rows of the token embedding, columns of the token head): the task's.
  int vocab_size = 4;
  // Which heads the model has (models/heads.hpp): the scalar regression head, the token head
  // (vocabulary-sized logits), or both. A head's parameters exist only when it does.
  bool scalar_head = true;
  bool token_head = false;

  int head_dim() const { return d_model / n_head; }
  // The fields above as text, an encoding's settings only for that encoding (max_positions only
  // for kLearned, the one it sizes): two configs are one parameter layout and one computation
  // exactly when their keys are equal (the GPU trains such runs as one batched model). A new
  // field goes here too.
  std::string key() const;
  // Throws UsageError naming the bad value: non-positive sizes, d_model not divisible by n_head,
  // odd head_dim with RoPE (it rotates pairs), learned PE without a table size, no head, an
  // embedding scale that is not a finite number > 0, t5's
  // buckets out of range, a bias expression that does not parse or given to another encoding.
  void validate() const;
};

}  // namespace lenlab
