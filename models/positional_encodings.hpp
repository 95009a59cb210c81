#pragma once
// The one table of positional encodings: each one's name, help text and settings, and its math
// (models/encodings/encoding_math.hpp: the model hooks it fills in). The CLI's help and choices,
// config files, the Python module and the live page read it; the model, the cost model and the lab
// read the hooks. A new encoding is its enumerator here, its row (models/positional_encodings.cpp)
// and its math (a file of models/encodings/).
#include <string>
#include <vector>

namespace lenlab {

struct EncodingMath;  // models/encodings/encoding_math.hpp

enum class PositionalEncoding {
  kNope,        // no positional signal: the causal mask alone breaks permutation symmetry
  kLearned,     // GPT-2 style absolute table, one row per position (BOS is position 0)
  kAlibi,       // Press et al.: a per-head linear penalty -m_h·(i - j) on the attention logits
  kRope,        // Su et al.: q and k rotated by position-dependent angles, base 10000
  kT5,          // Raffel et al.: a learned scalar per head and log-spaced distance bucket
  kKerple,      // Chi et al. 2022, the log variant: -r1_h·log(1 + r2_h·δ), r1, r2 > 0 learned
  kBias,        // a user's fixed bias b(d, h), an expression (--pe-bias)
  kFire,        // Li et al. 2023: a learned MLP of log distance over log query position
  kSinusoidal,  // Vaswani et al. 2017: a fixed sin/cos vector per absolute position
};

struct PositionalEncodingInfo {
  PositionalEncoding pe;
  const char* name;
  const char* help;                    // one line: what it adds, after whom
  const char* settings = "";           // the flags that configure it ("" when none)
  bool needs_setting = false;          // it cannot run without one of them (bias: its expression)
  const EncodingMath* math = nullptr;  // what it computes (models/encodings/<name>.cpp)

  // The model's hooks it uses, as its math fills them in:
  bool learned_table() const;  // learned rows added to the token embedding (wpe), sized
  bool absolute() const;       // any absolute table added to the token embedding
  bool rotary() const;         // q and k rotated by position (RoPE's tables; --rope-scaling)
  bool distance_bias() const;  // an additive bias b_h(δ) on the logits (AttentionArgs::bias)
  bool learned_bias() const;   // that bias has parameters, trained through its gradient
  // It sees relative distances (rotations or a bias by δ), so a distance cap applies.
  bool relative() const { return rotary() || distance_bias(); }
};

const std::vector<PositionalEncodingInfo>& positional_encodings();
const PositionalEncodingInfo& positional_encoding_info(PositionalEncoding pe);
PositionalEncoding parse_positional_encoding(const std::string& name);  // throws UsageError
std::string positional_encoding_name(PositionalEncoding pe);
std::vector<std::string> positional_encoding_names();
// "name: help" per line, for --help.
std::string positional_encoding_help();

}  // namespace lenlab
