#pragma once
// The additive positional biases on the attention logits (ops::AttentionArgs::bias): ALiBi's
// fixed slopes, T5's learned buckets, KERPLE's learned log decay, FIRE's learned function and a
// user's expression. Each is a table b_h(r, δ) by head h, row r and relative distance δ ≥ 0 (after
// any cap), computed on the host in double from the encoding's parameters before a forward; the
// backward's dLoss/db comes back here and is chained to those parameters. A bias of the distance
// alone has one row (r = 0); FIRE's depends on the query's position too, so its row r is pos_i.
// The tables are small, so this costs nothing next to attention on either backend, and the math
// of an encoding is written once.
//
// Parameters (models/parameters.hpp, the "pe.*" tensors, contiguous, the encoding's block):
//   t5:     pe.t5.bias [tables, n_buckets, n_head], zero at the start (the model starts as NoPE)
//   kerple: pe.kerple.r1 [n_layer, n_head], pe.kerple.r2 [n_layer, n_head], each r = softplus(raw)
//           so that it stays > 0; they start at r1_h = 2(h + ½)/H and r2_h = (h + ½)/H, spread
//           over KERPLE's initial ranges (0, 2) and (0, 1) in head order.
//   fire:   b_h(i, δ) = f(ψ(δ) / ψ(max(L, i))), ψ(x) = log(c·x + 1), f an MLP 1 → W (ReLU) → H
//           without an output bias (a constant per head is invisible to the softmax, so its
//           gradient is 0 and Adam would move it by rounding noise alone); per layer
//           pe.fire.w1 [1, n_layer·W], b1 [n_layer, W], w2 [W, n_layer·H], c and threshold
//           [n_layer] with c = softplus(raw) and L = softplus(raw) > 0; c starts at 1 and L at
//           ModelConfig::fire_threshold (the training window), w1, w2 at N(0, 1/fan_in), b1 at 0.
//           At r = L exactly, L's branch of the max takes the gradient.
// A table is shared by the layers (t5 by default: T5 shares one across its layers) or one per
// layer (kerple, fire; t5 with t5_per_layer).
#include <memory>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "models/custom_position_bias.hpp"
#include "reparam/expression.hpp"

namespace lenlab {

// T5's causal bucket of a distance n ≥ 0 (Raffel et al., mesh-tensorflow's and Hugging Face's
// _relative_position_bucket with bidirectional=False): n itself below n_buckets/2; past it,
// n_buckets/2 + ⌊log(n / (n_buckets/2)) / log(max_distance / (n_buckets/2)) · (n_buckets/2)⌋
// computed in float32 as they do, capped at n_buckets − 1.
int t5_bucket(int n, int n_buckets, int max_distance);

class PositionBias {
 public:
  // Null when the config's encoding has no bias (PositionalEncodingInfo::distance_bias).
  static std::unique_ptr<PositionBias> make(const ModelConfig& c);
  explicit PositionBias(const ModelConfig& c);

  bool learned() const { return learned_; }
  // The table's rows: the query's position (FIRE), or one row for every query.
  bool by_query_position() const { return config_.pe == PositionalEncoding::kFire; }
  int n_tables() const { return n_tables_; }
  // Tables of config c's encoding: one per layer (kerple, fire, t5 per layer) or one shared.
  static int tables_of(const ModelConfig& c);
  int table_of_layer(int l) const { return n_tables_ == 1 ? 0 : l; }
  // Elements of the encoding's parameter block (0 when fixed).
  size_t n_parameters() const;
  // The block's values at initialisation where the encoding sets them (InitKind::kEncoding);
  // the other entries are 0 (Model::init draws them).
  std::vector<double> initial_parameters() const;

  // Table t [n_head, rows, cols] (b_h(r, δ) for r = 0..rows−1, δ = 0..cols−1; rows = 1 unless
  // by_query_position()) from the parameter block pe (null when fixed). Throws UsageError naming d
  // and h where a user's bias is not finite.
  std::vector<double> table(const double* pe, int t, int rows, int cols) const;
  // The same in T: ALiBi's entries are −(m_h·δ) multiplied in T, as the kernels once computed them.
  template <class T>
  std::vector<T> table_as(const double* pe, int t, int rows, int cols) const {
    std::vector<T> out;
    if (config_.pe == PositionalEncoding::kAlibi) {
      for (int h = 0; h < config_.n_head; ++h)
        for (int d = 0; d < cols; ++d)
          out.push_back(-(static_cast<T>(slopes_[h]) * static_cast<T>(d)));
      return out;
    }
    for (double v : table(pe, t, rows, cols)) out.push_back(static_cast<T>(v));
    return out;
  }
  // dpe += ∂table_t/∂pe · dtable, dtable [n_head, rows, cols].
  void chain(const double* pe, int t, int rows, int cols, const double* dtable, double* dpe) const;

 private:
  ModelConfig config_;
  bool learned_ = false;
  int n_tables_ = 1;
  std::vector<double> slopes_;                        // alibi
  std::unique_ptr<Expression> expression_;            // bias: b(d, h) as an expression
  std::shared_ptr<const CustomPositionBias> custom_;  // bias: b(d, h) as a Python function
};

// Checks a user's bias (--pe-bias: an expression, or a Python function "python:NAME") for a finite
// value at every distance 0..max_distance and head; throws UsageError naming the first d and h that
// give a non-finite one, or a Python function that is not registered.
void check_bias_expression(const ModelConfig& c, int max_distance);

}  // namespace lenlab
