#pragma once
// What decoding costs in memory beyond the weights (lenlab generate and lenlab eval --stream
// refuse, before running, work past --max-memory): the key-value cache, and the tables by position
// the model builds for the largest position decoded. A Λ-mask bounds the cache
// (models/decode_cache.hpp) but not those tables: RoPE's angles and a distance bias's table grow
// with the largest position unless a distance cap bounds the distances, and a fixed absolute
// table (sinusoidal) or FIRE's rows by query position grow with it always.
#include <cstddef>

#include "models/attention_spec.hpp"
#include "models/config.hpp"

namespace lenlab {

struct DecodeMemory {
  double cache_bytes = 0;   // the [q|k|v] rows and their positions
  double tables_bytes = 0;  // the tables by position, host and backend copies together
  double total() const { return cache_bytes + tables_bytes; }
};

// For one sequence of `capacity` tokens at positions 0..capacity − 1, in numbers of
// `scalar_bytes` (4: float32, 8: float64).
DecodeMemory decode_memory(const ModelConfig& config, const AttentionSpec& attention, int capacity,
                           size_t scalar_bytes);

}  // namespace lenlab
