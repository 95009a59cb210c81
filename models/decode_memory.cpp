#include "models/decode_memory.hpp"

#include <algorithm>

#include "models/decode_cache.hpp"
#include "models/encodings/encoding_math.hpp"
#include "models/positional_encodings.hpp"

namespace lenlab {

DecodeMemory decode_memory(const ModelConfig& config, const AttentionSpec& attention, int capacity,
                           size_t scalar_bytes) {
  const PositionalEncodingInfo& pe = positional_encoding_info(config.pe);
  const ops::AttentionWindow& window = attention.window;
  const double scalar = static_cast<double>(scalar_bytes);
  const double positions = capacity;  // 0 .. capacity − 1
  // Distances reach the largest position, or the cap.
  const double distances =
      window.max_distance > 0 ? std::min<double>(window.max_distance + 1, positions) : positions;
  DecodeMemory m;
  m.cache_bytes = static_cast<double>(decode_slot_rows(capacity, window)) *
                  (static_cast<double>(config.n_layer) * 3 * config.d_model * scalar + sizeof(int));
  // Each table is kept on the host and again in the backend's memory (models/model_impl.hpp's
  // prepare_tables); a fixed absolute table is first computed in double.
  if (pe.absolute() && !pe.learned_table())
    m.tables_bytes += positions * config.d_model * (2 * scalar + sizeof(double));
  if (pe.rotary())  // cos and sin, [rows, head_dim / 2]
    m.tables_bytes += distances * config.head_dim() * 2 * scalar;
  if (pe.distance_bias()) {  // per head; a learned bias may keep one table per layer
    const double rows = pe.math && pe.math->by_query_position ? positions : 1;
    m.tables_bytes +=
        rows * distances * config.n_head * 2 * scalar * (pe.learned_bias() ? config.n_layer : 1);
  }
  return m;
}

}  // namespace lenlab
