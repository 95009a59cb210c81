#include "models/config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace lenlab {

std::string ModelConfig::key() const {
  // An encoding's settings count for that encoding only (resolve() fills FIRE's threshold for
  // every run, from the training window).
  using PE = PositionalEncoding;
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", n_layer, d_model, n_head, d_ff,
      positional_encoding_name(pe), vocab_size, scalar_head, token_head,
      pe == PE::kLearned ? fmt::format("rows {}", max_positions) : "",
      pe == PE::kRope ? fmt::format("base {} scaling {} {} {} {} {}", rope_base,
                                    rope_scaling_name(rope_scaling.kind), rope_scaling.factor,
                                    rope_scaling.original_length, rope_scaling.yarn_alpha,
                                    rope_scaling.yarn_beta)
                      : "",
      pe == PE::kT5 ? fmt::format("{} {} {}", t5_buckets, t5_max_distance, t5_per_layer) : "",
      pe == PE::kFire ? fmt::format("{} {}", fire_threshold, fire_width)
                      : (pe == PE::kBias ? pe_bias : ""));
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
  if (!(rope_base > 1.0) || !std::isfinite(rope_base))
    throw UsageError(fmt::format("--rope-base must be a finite number > 1, got {}", rope_base));
  if (pe == PositionalEncoding::kT5) {
    if (t5_buckets < 2)
      throw UsageError(fmt::format(
          "--t5-buckets must be >= 2 (half of them exact distances, the rest log-spaced), got {}",
          t5_buckets));
    if (t5_max_distance <= t5_buckets / 2)
      throw UsageError(fmt::format(
          "--t5-max-distance must be > --t5-buckets / 2 = {} (the exact buckets cover distances "
          "below that; the log-spaced ones run from there to max_distance), got {}",
          t5_buckets / 2, t5_max_distance));
  }
  if (pe == PositionalEncoding::kFire && !(fire_threshold >= 1.0 && std::isfinite(fire_threshold)))
    throw UsageError(fmt::format(
        "fire's threshold L must start at a finite number >= 1 token, got {}", fire_threshold));
  if (pe == PositionalEncoding::kFire) positive("fire's hidden width", fire_width);
  if (pe == PositionalEncoding::kBias && pe_bias.empty())
    throw UsageError(
        "--pe bias needs --pe-bias EXPR: the bias as an expression in the distance d >= 0 and the "
        "head index h, e.g. '-(h+1)/8*log(1+d)'");
  if (pe != PositionalEncoding::kBias && !pe_bias.empty())
    throw UsageError(
        fmt::format("--pe-bias '{}' is the bias of --pe bias; this run's encoding is "
                    "{}: give --pe bias or leave --pe-bias out",
                    pe_bias, positional_encoding_name(pe)));
}

}  // namespace lenlab
