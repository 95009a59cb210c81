#include "models/config.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {

std::vector<std::string> positional_encoding_names() {
  return {"nope", "learned", "alibi", "rope"};
}

PositionalEncoding parse_positional_encoding(const std::string& name) {
  if (name == "nope") return PositionalEncoding::kNope;
  if (name == "learned") return PositionalEncoding::kLearned;
  if (name == "alibi") return PositionalEncoding::kAlibi;
  if (name == "rope") return PositionalEncoding::kRope;
  throw UsageError(fmt::format("unknown positional encoding '{}'; valid choices: {}", name,
                               join_choices(positional_encoding_names())));
}

std::string positional_encoding_name(PositionalEncoding pe) {
  switch (pe) {
    case PositionalEncoding::kNope:
      return "nope";
    case PositionalEncoding::kLearned:
      return "learned";
    case PositionalEncoding::kAlibi:
      return "alibi";
    case PositionalEncoding::kRope:
      return "rope";
  }
  return "?";
}

void ModelConfig::validate() const {
  auto positive = [](const char* what, int v) {
    if (v <= 0) throw UsageError(fmt::format("{} must be a positive integer, got {}", what, v));
  };
  positive("--n-layer", n_layer);
  positive("--d-model", d_model);
  positive("--n-head", n_head);
  positive("--d-ff", d_ff);
  if (d_model % n_head != 0)
    throw UsageError(
        fmt::format("--d-model {} is not divisible by --n-head {}; choose n_head among "
                    "the divisors of d_model",
                    d_model, n_head));
  if (pe == PositionalEncoding::kRope && head_dim() % 2 != 0)
    throw UsageError(
        fmt::format("rope rotates pairs of dimensions, so d_model / n_head must be even; "
                    "got {} / {} = {}",
                    d_model, n_head, head_dim()));
  if (pe == PositionalEncoding::kLearned && max_positions <= 0)
    throw UsageError(fmt::format("learned positions need a table size > 0, got {}", max_positions));
  positive("the vocabulary size", vocab_size);
  if (!scalar_head && !token_head)
    throw UsageError("a model needs a head: the scalar head, the token head or both");
  if (!(rope_base > 1.0)) throw UsageError(fmt::format("rope base must be > 1, got {}", rope_base));
}

}  // namespace lenlab
