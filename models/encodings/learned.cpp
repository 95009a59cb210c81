// Learned absolute positions (GPT-2): a trained row per position (BOS is position 0) added to the
// token embedding, the "wpe" parameters [max_positions, d_model] drawn N(0, 0.02). The table has
// ModelConfig::max_positions rows, sized at training time for the longest test sequence.
#include <fmt/format.h>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab::encodings {

extern const EncodingMath kLearned{
    .settings_key = [](const ModelConfig& c) { return fmt::format("rows {}", c.max_positions); },
    .validate =
        [](const ModelConfig& c) {
          if (c.max_positions <= 0)
            throw UsageError(
                fmt::format("learned positions need a table size > 0, got {}", c.max_positions));
        },
    .absolute = AbsoluteTable::kLearned,
};

}  // namespace lenlab::encodings
