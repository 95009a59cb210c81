#include "models/positional_encodings.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab {

// Each encoding's math, in its file of models/encodings/.
namespace encodings {
extern const EncodingMath kLearned, kSinusoidal, kRope, kAlibi, kT5, kKerple, kFire, kUserBias;
// NoPE: no hook at all.
const EncodingMath kNope{};
}  // namespace encodings

const std::vector<PositionalEncodingInfo>& positional_encodings() {
  using PE = PositionalEncoding;
  static const std::vector<PositionalEncodingInfo> table = {
      {.pe = PE::kNope,
       .name = "nope",
       .help = "no positional signal (the causal mask alone)",
       .math = &encodings::kNope},
      {.pe = PE::kLearned,
       .name = "learned",
       .help = "a learned vector per absolute position, added to the embedding",
       .math = &encodings::kLearned},
      {.pe = PE::kSinusoidal,
       .name = "sinusoidal",
       .help = "Vaswani et al.: a fixed sin/cos vector per absolute position, added to the "
               "embedding (any length, no parameters)",
       .math = &encodings::kSinusoidal},
      {.pe = PE::kAlibi,
       .name = "alibi",
       .help = "Press et al.: a fixed per-head slope, -m_h·δ on the logits",
       .math = &encodings::kAlibi},
      {.pe = PE::kRope,
       .name = "rope",
       .help = "Su et al.: q and k rotated by position",
       .settings = "--rope-base, --train-rope-scaling, --train-rope-factor",
       .math = &encodings::kRope},
      {.pe = PE::kT5,
       .name = "t5",
       .help = "Raffel et al.: a learned scalar per head and distance bucket (half exact, half "
               "log-spaced)",
       .settings = "--t5-buckets, --t5-max-distance, --t5-per-layer",
       .math = &encodings::kT5},
      {.pe = PE::kKerple,
       .name = "kerple",
       .help = "Chi et al. 2022 (log): -r1_h·log(1 + r2_h·δ), r1, r2 > 0 learned",
       .math = &encodings::kKerple},
      {.pe = PE::kFire,
       .name = "fire",
       .help = "Li et al. 2023: a learned MLP of ψ(δ)/ψ(max(L, i)), ψ(x) = log(c·x + 1), c and L "
               "learned",
       .settings = "--fire-width, --fire-threshold",
       .math = &encodings::kFire},
      {.pe = PE::kBias,
       .name = "bias",
       .help = "a fixed bias of your own: an expression in d and h (--pe-bias)",
       .settings = "--pe-bias",
       .needs_setting = true,
       .math = &encodings::kUserBias},
  };
  return table;
}

bool PositionalEncodingInfo::learned_table() const {
  return math->absolute == AbsoluteTable::kLearned;
}
bool PositionalEncodingInfo::absolute() const {
  return math->absolute != AbsoluteTable::kNone;
}
bool PositionalEncodingInfo::rotary() const {
  return math->rotary;
}
bool PositionalEncodingInfo::distance_bias() const {
  return math->make_bias != nullptr;
}
bool PositionalEncodingInfo::learned_bias() const {
  return math->bias_tensors != nullptr;
}

const EncodingMath& encoding_math(PositionalEncoding pe) {
  return *positional_encoding_info(pe).math;
}

const PositionalEncodingInfo& positional_encoding_info(PositionalEncoding pe) {
  for (const PositionalEncodingInfo& info : positional_encodings())
    if (info.pe == pe) return info;
  throw std::logic_error("positional_encoding_info: an encoding without a row");
}

std::vector<std::string> positional_encoding_names() {
  std::vector<std::string> names;
  for (const PositionalEncodingInfo& info : positional_encodings()) names.push_back(info.name);
  return names;
}

PositionalEncoding parse_positional_encoding(const std::string& name) {
  for (const PositionalEncodingInfo& info : positional_encodings())
    if (name == info.name) return info.pe;
  throw UsageError(fmt::format("unknown positional encoding '{}'; valid choices: {}", name,
                               join_choices(positional_encoding_names())));
}

std::string positional_encoding_name(PositionalEncoding pe) {
  return positional_encoding_info(pe).name;
}

std::string positional_encoding_help() {
  std::string out;
  for (const PositionalEncodingInfo& info : positional_encodings())
    out += fmt::format("\n  {:10} {}{}", info.name, info.help,
                       *info.settings ? fmt::format(" [{}]", info.settings) : std::string());
  return out;
}

}  // namespace lenlab
