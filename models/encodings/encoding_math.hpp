#pragma once
// What a positional encoding computes: its settings' part of the model's key and their checks, and
// the model hooks it fills in. Each encoding's math is one file of models/encodings/ holding one
// EncodingMath; its row in the table of encodings (models/positional_encodings.cpp) points at it.
// The model, the cost model and the lab read these hooks, never an encoding's name, so a new
// encoding is its row, its math and its test.
//
// The hooks (the model's; models/model.hpp):
//  * an absolute table added to the token embedding, out[t] = wte[token_t] + table[pos_t]:
//    learned (the "wpe" parameters, one row per position up to ModelConfig::max_positions) or
//    fixed (absolute_values, computed on the host for every position a batch reaches);
//  * rotations of q and k by position (RoPE's angle tables, models/rope_scaling.hpp);
//  * an additive bias b_h(r, δ) on the attention logits (models/position_bias.hpp), fixed or
//    learned, whose math is a BiasMath.
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "models/config.hpp"

namespace lenlab {

// How a parameter starts (Model::init). kEncoding: the encoding's own values
// (BiasMath::initial_values).
enum class InitKind { kOne, kZero, kNormal002, kNormalResidual, kFanIn, kEncoding };

// One parameter tensor of an encoding's bias ("pe.<encoding>.<name>"), in storage order.
struct EncodingTensor {
  std::string name;
  std::vector<int> shape;
  InitKind init;
  // kEncoding: the flag its initial values come from (fire's "--fire-threshold"), named when a
  // float32 run cannot hold them; null when they are the encoding's own constants.
  const char* setting = nullptr;
};

// The additive bias of one model config: b_h(r, δ) for head h, row r and distance δ ≥ 0, one table
// per layer or one shared, from the encoding's parameter block `pe` (its tensors, contiguous, in
// their order; null for a fixed bias). Tables are [n_head, rows, cols], entry (h, r, δ) at
// (h·rows + r)·cols + δ; rows = 1 unless EncodingMath::by_query_position.
class BiasMath {
 public:
  virtual ~BiasMath() = default;
  // Table t in double (throws UsageError naming d and h where a user's bias is not finite).
  virtual std::vector<double> table(const double* pe, int t, int rows, int cols) const = 0;
  // The same in float, as the float model uses it: rounded from the double table unless the
  // encoding rounds its own way (ALiBi multiplies in float, as its kernels once did).
  virtual std::vector<float> table_float(const double* pe, int t, int rows, int cols) const {
    const std::vector<double> d = table(pe, t, rows, cols);
    return {d.begin(), d.end()};
  }
  // dpe += ∂table_t/∂pe · dtable, dtable [n_head, rows, cols] (learned biases only).
  virtual void chain(const double* pe, int t, int rows, int cols, const double* dtable,
                     double* dpe) const {
    (void)pe, (void)t, (void)rows, (void)cols, (void)dtable, (void)dpe;
  }
  // The block's initial values where its tensors say kEncoding (the other entries are drawn by
  // Model::init); `block` holds every element of the block, zeroed.
  virtual void initial_values(double* block) const { (void)block; }
};

enum class AbsoluteTable { kNone, kLearned, kFixed };

struct EncodingMath {
  // Its settings (ModelConfig's fields it reads) as text for ModelConfig::key(); null: none.
  std::string (*settings_key)(const ModelConfig&) = nullptr;
  // UsageError naming the bad setting (a model config it cannot run); null: nothing to check.
  void (*validate)(const ModelConfig&) = nullptr;

  AbsoluteTable absolute = AbsoluteTable::kNone;
  // kFixed: out [count, d_model] = the table's rows for positions first..first+count−1.
  void (*absolute_values)(int first, int count, int d_model, double* out) = nullptr;

  bool rotary = false;  // q and k rotated by position (RoPE, its extensions)

  // The bias (null: none), its learned parameters (null: a fixed bias), its number of tables (one
  // per layer or one shared; null: one) and whether its rows are the query's position (FIRE).
  std::unique_ptr<BiasMath> (*make_bias)(const ModelConfig&) = nullptr;
  std::vector<EncodingTensor> (*bias_tensors)(const ModelConfig&) = nullptr;
  int (*bias_tables)(const ModelConfig&) = nullptr;
  bool by_query_position = false;
  // Each distance reads entries of its own (its bucket's, T5's), which start at 0: an entry still
  // exactly 0 in every head after training never had a gradient (AdamW moves any parameter whose
  // gradient was once non-zero, and decays an untouched 0 to 0). Encodings whose distances share
  // parameters (ALiBi, KERPLE, FIRE, a user's bias) leave it false: no distance of theirs is
  // untrained apart from the rest (models/position_bias.hpp, untrained_distances).
  bool zero_until_trained = false;
};

// The math of an encoding (its row's; models/positional_encodings.cpp).
const EncodingMath& encoding_math(PositionalEncoding pe);

// softplus(x) = log(1 + eˣ), its inverse and its derivative σ(x): learned scales stay > 0.
inline double softplus(double x) {
  return x > 30 ? x : std::log1p(std::exp(x));
}
inline double softplus_inverse(double y) {
  return y > 30 ? y : std::log(std::expm1(y));
}
inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

}  // namespace lenlab
