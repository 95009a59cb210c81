// A user's own fixed bias b(d, h) (--pe bias): a muparser expression in the distance d ≥ 0 and the
// head index h (--pe-bias '-(h+1)/8*log(1+d)'), or a function registered from Python
// ("python:NAME", models/custom_position_bias.hpp). One table, no parameters; a value that is not
// finite is refused, naming d and h.
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/named_registry.hpp"
#include "models/custom_position_bias.hpp"
#include "models/encodings/encoding_math.hpp"
#include "reparam/expression.hpp"

namespace lenlab::encodings {
namespace {

class UserBias final : public BiasMath {
 public:
  explicit UserBias(const ModelConfig& c) : text_(c.pe_bias), H_(c.n_head) {
    if (const std::string name = host_function_name(c.pe_bias); !name.empty()) {
      custom_ = find_custom_position_bias(name);
      if (!custom_)
        throw UsageError(fmt::format(
            "--pe-bias '{}': no Python position bias named '{}' is registered in this process; "
            "it is given as pe_bias=f in the Python module (lenlab.train, and lenlab.load to "
            "evaluate a run trained with one)",
            c.pe_bias, name));
    } else {
      expression_ = std::make_unique<Expression>(c.pe_bias, std::vector<std::string>{"d", "h"});
    }
  }

  std::vector<double> table(const double*, int, int, int cols) const override {
    std::vector<double> out(static_cast<size_t>(H_) * cols);
    if (custom_) {  // one call per head over every distance 0..cols−1
      std::vector<double> distances(static_cast<size_t>(cols));
      for (int d = 0; d < cols; ++d) distances[static_cast<size_t>(d)] = d;
      for (int h = 0; h < H_; ++h) {
        double* b = out.data() + static_cast<size_t>(h) * cols;
        custom_->f(distances.data(), distances.size(), h, b);
        for (int d = 0; d < cols; ++d)
          if (!std::isfinite(b[d]))
            throw UsageError(fmt::format(
                "the Python position bias '{}' is {} at distance d = {}, head h = {}; the bias "
                "must be finite at every distance a run meets (0 up to the longest test sequence)",
                custom_->name, b[d], d, h));
      }
      return out;
    }
    for (int h = 0; h < H_; ++h)
      for (int d = 0; d < cols; ++d) {
        double& b = out[static_cast<size_t>(h) * cols + d];
        b = (*expression_)({static_cast<double>(d), static_cast<double>(h)});
        if (!std::isfinite(b))
          throw UsageError(fmt::format(
              "--pe-bias '{}' is {} at distance d = {}, head h = {}; the bias must be finite at "
              "every distance a run meets (0 up to the longest test sequence)",
              text_, b, d, h));
      }
    return out;
  }

 private:
  std::string text_;
  int H_;
  std::unique_ptr<Expression> expression_;            // b(d, h) as an expression
  std::shared_ptr<const CustomPositionBias> custom_;  // b(d, h) as a Python function
};

}  // namespace

extern const EncodingMath kUserBias{
    .settings_key = [](const ModelConfig& c) { return c.pe_bias; },
    .validate =
        [](const ModelConfig& c) {
          if (c.pe_bias.empty())
            throw UsageError(
                "--pe bias needs --pe-bias EXPR: the bias as an expression in the distance d >= 0 "
                "and the head index h, e.g. '-(h+1)/8*log(1+d)'");
        },
    .make_bias = [](const ModelConfig& c) -> std::unique_ptr<BiasMath> {
      return std::make_unique<UserBias>(c);
    },
};

}  // namespace lenlab::encodings
