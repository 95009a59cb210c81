// RoPE (Su et al. 2021): q and k rotated pair by pair by angles p·θ_m, θ_m = base^(−2m/hd), and
// its context extensions (models/rope_scaling.hpp) in training (ModelConfig::rope_scaling) or at
// test time (AttentionSpec::rope). The rotation is models/cpu/rope.hpp's and models/cuda/rope.cu's.
#include <fmt/format.h>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab::encodings {

extern const EncodingMath kRope{
    .settings_key =
        [](const ModelConfig& c) {
          const RopeScaling& s = c.rope_scaling;
          return fmt::format("base {} scaling {} {} {} {} {}", c.rope_base,
                             rope_scaling_name(s.kind), s.factor, s.original_length, s.yarn_alpha,
                             s.yarn_beta);
        },
    .validate =
        [](const ModelConfig& c) {
          if (c.head_dim() % 2 != 0)
            throw UsageError(
                fmt::format("rope rotates pairs of dimensions, so d_model / n_head must be even; "
                            "got {} / {} = {}",
                            c.d_model, c.n_head, c.head_dim()));
        },
    .rotary = true,
};

}  // namespace lenlab::encodings
