#pragma once
// The model shape of the whole-model gradient checks: two blocks of width 8, two heads, small
// enough for finite differences over every parameter.
#include "models/config.hpp"

namespace lenlab::test {

inline ModelConfig small_config(PositionalEncoding pe) {
  ModelConfig c;
  c.n_layer = 2;
  c.d_model = 8;
  c.n_head = 2;
  c.d_ff = 12;
  c.pe = pe;
  c.max_positions = 12;
  return c;
}

}  // namespace lenlab::test
