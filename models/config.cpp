#include "models/config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab {

std::string ModelConfig::key() const {
  // An encoding's settings count for that encoding only (resolve() fills FIRE's threshold for
  // every run, from the training window): its math says which they are.
  const EncodingMath& m = encoding_math(pe);
  // The embedding scale only off its default: every key from before it stays the same.
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}{}", n_layer, d_model, n_head, d_ff,
                     positional_encoding_name(pe), vocab_size, scalar_head, token_head,
                     m.settings_key ? m.settings_key(*this) : "",
                     embedding_scale != 1.0 ? fmt::format("|embedding {}", embedding_scale) : "");
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
  positive("the vocabulary size", vocab_size);
  if (!scalar_head && !token_head)
    throw UsageError("a model needs a head: the scalar head, the token head or both");
  if (!(embedding_scale > 0.0) || !std::isfinite(embedding_scale))
    throw UsageError(fmt::format(
        "--embedding-scale must be a finite number > 0 (or sqrt_d), got {}", embedding_scale));
  if (!(rope_base > 1.0) || !std::isfinite(rope_base))
    throw UsageError(fmt::format("--rope-base must be a finite number > 1, got {}", rope_base));
  if (const EncodingMath& m = encoding_math(pe); m.validate) m.validate(*this);
  // --pe-bias belongs to the one encoding that needs a setting of its own.
  if (!positional_encoding_info(pe).needs_setting && !pe_bias.empty())
    throw UsageError(
        fmt::format("--pe-bias '{}' is the bias of --pe bias; this run's encoding is "
                    "{}: give --pe bias or leave --pe-bias out",
                    pe_bias, positional_encoding_name(pe)));
}

}  // namespace lenlab
