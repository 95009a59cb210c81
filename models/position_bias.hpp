#pragma once
// The additive positional biases on the attention logits (ops::AttentionArgs::bias): ALiBi's
// fixed slopes, T5's learned buckets, KERPLE's learned log decay and a user's expression. Each is
// a table b_h(δ) by head h and relative distance δ ≥ 0 (after any cap), computed on the host in
// double from the encoding's parameters before a forward; the backward's dLoss/db comes back here
// and is chained to those parameters. The tables are small (heads × distances), so this costs
// nothing next to attention, on either backend, and the math of an encoding is written once.
//
// Parameters (models/parameters.hpp, the "pe.*" tensors, contiguous, the encoding's block):
//   t5:     pe.t5.bias [tables, n_buckets, n_head], zero at the start (the model starts as NoPE)
//   kerple: pe.kerple.r1 [n_layer, n_head], pe.kerple.r2 [n_layer, n_head], each r = softplus(raw)
//           so that it stays > 0; they start at r1_h = 2(h + ½)/H and r2_h = (h + ½)/H, spread
//           over KERPLE's initial ranges (0, 2) and (0, 1) in head order.
// A table is shared by the layers (t5 by default: T5 shares one across its layers) or one per
// layer (kerple; t5 with t5_per_layer).
#include <memory>
#include <string>
#include <vector>

#include "models/config.hpp"
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
  int n_tables() const { return n_tables_; }
  int table_of_layer(int l) const { return n_tables_ == 1 ? 0 : l; }
  // Elements of the encoding's parameter block (0 when fixed).
  size_t n_parameters() const;
  // The block's values at initialisation (the encoding's own, not random).
  std::vector<double> initial_parameters() const;

  // Table t [n_head, 1, cols] (b_h(δ) for δ = 0..cols−1) from the parameter block pe (null when
  // fixed). Throws UsageError naming d and h where a user's expression is not finite.
  std::vector<double> table(const double* pe, int t, int cols) const;
  // The same in T: ALiBi's entries are −(m_h·δ) multiplied in T, as the kernels once computed them.
  template <class T>
  std::vector<T> table_as(const double* pe, int t, int cols) const {
    std::vector<T> out;
    if (config_.pe == PositionalEncoding::kAlibi) {
      for (int h = 0; h < config_.n_head; ++h)
        for (int d = 0; d < cols; ++d)
          out.push_back(-(static_cast<T>(slopes_[h]) * static_cast<T>(d)));
      return out;
    }
    for (double v : table(pe, t, cols)) out.push_back(static_cast<T>(v));
    return out;
  }
  // dpe += ∂table_t/∂pe · dtable, dtable [n_head, 1, cols].
  void chain(const double* pe, int t, int cols, const double* dtable, double* dpe) const;

 private:
  ModelConfig config_;
  bool learned_ = false;
  int n_tables_ = 1;
  std::vector<double> slopes_;              // alibi
  std::unique_ptr<Expression> expression_;  // bias: b(d, h)
};

// position_bias.csv: layer, head, distance, bias — every layer's b_h(δ) (a shared table repeated
// per layer) for δ = 0..max_distance, from a model's whole parameter vector; "" when the
// encoding has no bias.
std::string position_bias_csv_text(const ModelConfig& c, const std::vector<double>& params,
                                   int max_distance);

// Checks a user's bias expression (--pe-bias) for a finite value at every distance 0..max_distance
// and head; throws UsageError naming the first d and h that give a non-finite one.
void check_bias_expression(const ModelConfig& c, int max_distance);

}  // namespace lenlab
