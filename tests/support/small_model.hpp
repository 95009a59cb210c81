#pragma once
// The model shape of the whole-model gradient checks: two blocks of width 8, two heads, small
// enough for finite differences over every parameter.
#include <algorithm>
#include <vector>

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
  // Small enough that the test sequences reach the log-spaced buckets and past max_distance.
  c.t5_buckets = 4;
  c.t5_max_distance = 5;
  if (pe == PositionalEncoding::kBias) c.pe_bias = "-(h+1)/4*log(1+d)";
  // FIRE: a narrow MLP, and a threshold the test sequences pass (queries past it use their own ψ).
  c.fire_width = 4;
  c.fire_threshold = 3.0;
  return c;
}

// Model 0's q, k and v weights and biases set to 0 at every layer: every attention logit is then
// the positional bias alone (0 for NoPE and RoPE, −slope·distance for ALiBi).
template <class M>
void zero_qkv(M& model) {
  const int d = model.config().d_model;
  auto p = model.parameters(0);
  for (const auto& layer : model.weights().layers) {
    const size_t w = layer.w_qkv - model.params(), b = layer.b_qkv - model.params();
    std::fill_n(p.begin() + w, static_cast<size_t>(d) * 3 * d, 0);
    std::fill_n(p.begin() + b, 3 * d, 0);
  }
  model.set_parameters(0, p.data());
}

}  // namespace lenlab::test
