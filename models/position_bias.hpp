#pragma once
// The additive positional bias on the attention logits (ops::AttentionArgs::bias) of a model
// config, whatever its encoding: a table b_h(r, δ) by head h, row r and relative distance δ ≥ 0
// (after any cap), computed on the host in double from the encoding's parameters before a
// forward; the backward's dLoss/db comes back here and is chained to those parameters. A bias of
// the distance alone has one row (r = 0); one by the query's position too (FIRE) has a row per
// pos_i. The tables are small, so this costs nothing next to attention on either backend, and
// each encoding's math is written once, in its file of models/encodings/ (its BiasMath).
//
// Parameters: the encoding's tensors (EncodingMath::bias_tensors, the "pe.*" tensors of
// models/parameters.hpp), contiguous, its block. A table is shared by the layers or one per
// layer (EncodingMath::bias_tables).
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "models/config.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab {

class PositionBias {
 public:
  // Null when the config's encoding has no bias (PositionalEncodingInfo::distance_bias).
  static std::unique_ptr<PositionBias> make(const ModelConfig& c);
  explicit PositionBias(const ModelConfig& c);

  bool learned() const { return n_parameters_ > 0; }
  // The table's rows: the query's position (FIRE), or one row for every query.
  bool by_query_position() const { return by_query_position_; }
  int n_tables() const { return n_tables_; }
  // Tables of config c's encoding: one per layer or one shared.
  static int tables_of(const ModelConfig& c);
  int table_of_layer(int l) const { return n_tables_ == 1 ? 0 : l; }
  // Elements of the encoding's parameter block (0 when fixed).
  size_t n_parameters() const { return n_parameters_; }
  // The block's values at initialisation where the encoding sets them (InitKind::kEncoding);
  // the other entries are 0 (Model::init draws them).
  std::vector<double> initial_parameters() const;

  // Table t [n_head, rows, cols] (b_h(r, δ) for r = 0..rows−1, δ = 0..cols−1; rows = 1 unless
  // by_query_position()) from the parameter block pe (null when fixed). Throws UsageError naming d
  // and h where a user's bias is not finite.
  std::vector<double> table(const double* pe, int t, int rows, int cols) const {
    return math_->table(pe, t, rows, cols);
  }
  // The same in T (the model's scalar type).
  template <class T>
  std::vector<T> table_as(const double* pe, int t, int rows, int cols) const {
    if constexpr (std::is_same_v<T, float>) {
      return math_->table_float(pe, t, rows, cols);
    } else {
      const std::vector<double> d = table(pe, t, rows, cols);
      return std::vector<T>(d.begin(), d.end());
    }
  }
  // dpe += ∂table_t/∂pe · dtable, dtable [n_head, rows, cols].
  void chain(const double* pe, int t, int rows, int cols, const double* dtable, double* dpe) const {
    math_->chain(pe, t, rows, cols, dtable, dpe);
  }

 private:
  std::unique_ptr<BiasMath> math_;
  bool by_query_position_ = false;
  int n_tables_ = 1;
  size_t n_parameters_ = 0;
};

// The encoding's parameter block within a model's whole parameter vector (models/parameters.hpp),
// null when it has none.
const double* encoding_block(const ModelConfig& c, const std::vector<double>& params);

// Per distance 0..max_distance: 1 where some table (a layer's, or the shared one) still holds its
// initial 0 in every head at that distance's entries, an entry no training step reached
// (EncodingMath::zero_until_trained: T5's buckets past the training window). Empty for an encoding
// without such entries (its distances share parameters, or it has no learned bias).
std::vector<uint8_t> untrained_distances(const ModelConfig& c, const std::vector<double>& params,
                                         int max_distance);

// Checks a fixed bias (a user's --pe-bias: an expression, or a Python function "python:NAME") for a
// finite value at every distance 0..max_distance and head; throws UsageError naming the first d and
// h that give a non-finite one, or a Python function that is not registered. Other encodings pass.
void check_fixed_bias(const ModelConfig& c, int max_distance);

// For a float32 run: the bias as the float model will hold it is finite. A fixed bias's float table
// (BiasMath::table_float) at every distance 0..max_distance, and a learned bias's initial values
// (fire's --fire-threshold) rounded to float; throws UsageError naming the setting, the value and
// float32's largest finite value (3.4e38). A float64 run may keep such values.
void check_float32_bias(const ModelConfig& c, int max_distance);

}  // namespace lenlab
