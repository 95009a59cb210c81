#include "models/positional_encodings.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {

const std::vector<PositionalEncodingInfo>& positional_encodings() {
  using PE = PositionalEncoding;
  // name, help, settings; absolute_table, rotary, distance_bias, learned_bias, relative
  static const std::vector<PositionalEncodingInfo> table = {
      {PE::kNope, "nope", "no positional signal (the causal mask alone)", "", false, false, false,
       false, false},
      {PE::kLearned, "learned", "a learned vector per absolute position, added to the embedding",
       "", true, false, false, false, false},
      {PE::kAlibi, "alibi", "Press et al.: a fixed per-head slope, -m_h·δ on the logits", "", false,
       false, true, false, true},
      {PE::kRope, "rope", "Su et al.: q and k rotated by position", "--rope-base", false, true,
       false, false, true},
      {PE::kT5, "t5",
       "Raffel et al.: a learned scalar per head and distance bucket (half exact, half "
       "log-spaced)",
       "--t5-buckets, --t5-max-distance, --t5-per-layer", false, false, true, true, true},
      {PE::kKerple, "kerple", "Chi et al. 2022 (log): -r1_h·log(1 + r2_h·δ), r1, r2 > 0 learned",
       "", false, false, true, true, true},
      {PE::kBias, "bias", "a fixed bias of your own: an expression in d and h (--pe-bias)",
       "--pe-bias", false, false, true, false, true},
  };
  return table;
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
    out += fmt::format("\n  {:8} {}{}", info.name, info.help,
                       *info.settings ? fmt::format(" [{}]", info.settings) : std::string());
  return out;
}

}  // namespace lenlab
