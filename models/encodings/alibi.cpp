// ALiBi (Press et al. 2022): a fixed per-head linear penalty, b_h(δ) = −m_h·δ, with the slopes m_h
// of ops::alibi_slopes. One table, no parameters.
#include "models/encodings/encoding_math.hpp"
#include "models/ops/tables.hpp"

namespace lenlab::encodings {
namespace {

class AlibiBias final : public BiasMath {
 public:
  explicit AlibiBias(const ModelConfig& c) : slopes_(ops::alibi_slopes(c.n_head)) {}

  std::vector<double> table(const double*, int, int, int cols) const override {
    std::vector<double> out;
    for (const double m : slopes_)
      for (int d = 0; d < cols; ++d) out.push_back(-m * d);
    return out;
  }
  // −(m_h·δ) multiplied in float, as the kernels computed it before the tables existed.
  std::vector<float> table_float(const double*, int, int, int cols) const override {
    std::vector<float> out;
    for (const double m : slopes_)
      for (int d = 0; d < cols; ++d)
        out.push_back(-(static_cast<float>(m) * static_cast<float>(d)));
    return out;
  }

 private:
  std::vector<double> slopes_;
};

}  // namespace

extern const EncodingMath kAlibi{
    .make_bias = [](const ModelConfig& c) -> std::unique_ptr<BiasMath> {
      return std::make_unique<AlibiBias>(c);
    },
};

}  // namespace lenlab::encodings
