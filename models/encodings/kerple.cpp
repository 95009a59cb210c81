// KERPLE, its log variant (Chi et al. 2022): b_h(δ) = −r1_h·log(1 + r2_h·δ) with r1, r2 > 0
// learned, one table per layer. Parameters: pe.kerple.r1 [n_layer, n_head] and pe.kerple.r2
// [n_layer, n_head], each r = softplus(raw); they start at r1_h = 2(h + ½)/H and r2_h = (h + ½)/H,
// spread over KERPLE's initial ranges (0, 2) and (0, 1) in head order.
#include "models/encodings/encoding_math.hpp"

namespace lenlab::encodings {
namespace {

class KerpleBias final : public BiasMath {
 public:
  explicit KerpleBias(const ModelConfig& c)
      : H_(c.n_head), r2_(static_cast<size_t>(c.n_layer) * c.n_head), layers_(c.n_layer) {}

  std::vector<double> table(const double* pe, int t, int, int cols) const override {
    std::vector<double> out(static_cast<size_t>(H_) * cols);
    for (int h = 0; h < H_; ++h) {
      const size_t i1 = static_cast<size_t>(t) * H_ + h;
      const double r1 = softplus(pe[i1]), r2 = softplus(pe[r2_ + i1]);
      for (int d = 0; d < cols; ++d)
        out[static_cast<size_t>(h) * cols + d] = -r1 * std::log1p(r2 * d);
    }
    return out;
  }
  // b = −softplus(a1)·log(1 + softplus(a2)·δ)
  void chain(const double* pe, int t, int, int cols, const double* dtable,
             double* dpe) const override {
    for (int h = 0; h < H_; ++h)
      for (int d = 0; d < cols; ++d) {
        const double g = dtable[static_cast<size_t>(h) * cols + d];
        if (g == 0) continue;
        const size_t i1 = static_cast<size_t>(t) * H_ + h;
        const double a1 = pe[i1], a2 = pe[r2_ + i1];
        const double r1 = softplus(a1), r2 = softplus(a2);
        dpe[i1] += g * -std::log1p(r2 * d) * sigmoid(a1);
        dpe[r2_ + i1] += g * -r1 * d / (1.0 + r2 * d) * sigmoid(a2);
      }
  }
  void initial_values(double* block) const override {
    for (int t = 0; t < layers_; ++t)
      for (int h = 0; h < H_; ++h) {
        block[static_cast<size_t>(t) * H_ + h] = softplus_inverse(2.0 * (h + 0.5) / H_);
        block[r2_ + static_cast<size_t>(t) * H_ + h] = softplus_inverse((h + 0.5) / H_);
      }
  }

 private:
  int H_;
  size_t r2_;  // where r2 starts in the block
  int layers_;
};

}  // namespace

extern const EncodingMath kKerple{
    .make_bias = [](const ModelConfig& c) -> std::unique_ptr<BiasMath> {
      return std::make_unique<KerpleBias>(c);
    },
    .bias_tensors =
        [](const ModelConfig& c) {
          return std::vector<EncodingTensor>{
              {"pe.kerple.r1", {c.n_layer, c.n_head}, InitKind::kEncoding},
              {"pe.kerple.r2", {c.n_layer, c.n_head}, InitKind::kEncoding}};
        },
    .bias_tables = [](const ModelConfig& c) { return c.n_layer; },
};

}  // namespace lenlab::encodings
