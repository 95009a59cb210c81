#include "models/position_bias.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "models/parameters.hpp"

namespace lenlab {

std::unique_ptr<PositionBias> PositionBias::make(const ModelConfig& c) {
  if (!encoding_math(c.pe).make_bias) return nullptr;
  return std::make_unique<PositionBias>(c);
}

int PositionBias::tables_of(const ModelConfig& c) {
  const EncodingMath& m = encoding_math(c.pe);
  return m.bias_tables ? m.bias_tables(c) : 1;
}

PositionBias::PositionBias(const ModelConfig& c) {
  const EncodingMath& m = encoding_math(c.pe);
  if (!m.make_bias) throw std::logic_error("PositionBias: the encoding has no bias");
  math_ = m.make_bias(c);
  by_query_position_ = m.by_query_position;
  n_tables_ = tables_of(c);
  if (m.bias_tensors)
    for (const EncodingTensor& t : m.bias_tensors(c)) {
      size_t n = 1;
      for (const int s : t.shape) n *= static_cast<size_t>(s);
      n_parameters_ += n;
    }
}

std::vector<double> PositionBias::initial_parameters() const {
  std::vector<double> p(n_parameters_, 0.0);
  math_->initial_values(p.data());
  return p;
}

const double* encoding_block(const ModelConfig& c, const std::vector<double>& params) {
  for (const TensorInfo& t : parameter_layout(c))
    if (t.name.rfind("pe.", 0) == 0) return params.data() + t.offset;
  return nullptr;
}

std::vector<uint8_t> untrained_distances(const ModelConfig& c, const std::vector<double>& params,
                                         int max_distance) {
  if (!encoding_math(c.pe).zero_until_trained || max_distance < 0) return {};
  if (params.empty())
    throw std::invalid_argument("untrained_distances: the model's weights are needed");
  const PositionBias bias(c);
  const int cols = max_distance + 1;
  std::vector<uint8_t> untrained(cols, 0);
  for (int t = 0; t < bias.n_tables(); ++t) {
    const std::vector<double> table = bias.table(encoding_block(c, params), t, 1, cols);
    for (int d = 0; d < cols; ++d) {
      bool zero = true;
      for (int h = 0; h < c.n_head && zero; ++h)
        zero = table[static_cast<size_t>(h) * cols + d] == 0;
      if (zero) untrained[d] = 1;
    }
  }
  return untrained;
}

void check_fixed_bias(const ModelConfig& c, int max_distance) {
  // Only a bias the user writes (the encoding needs it as a setting) can fail: the built-in fixed
  // ones (ALiBi) are finite everywhere, and tables for a million distances are not free.
  const PositionalEncodingInfo& info = positional_encoding_info(c.pe);
  if (!info.distance_bias() || info.learned_bias() || !info.needs_setting) return;
  PositionBias(c).table(nullptr, 0, 1, max_distance + 1);
}

void check_float32_bias(const ModelConfig& c, int max_distance) {
  const PositionalEncodingInfo& info = positional_encoding_info(c.pe);
  if (!info.distance_bias()) return;
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const PositionBias bias(c);
  if (!bias.learned()) {
    // Only a user's bias can leave float's range (ALiBi's −m·δ stays below 2^31).
    if (!info.needs_setting) return;
    // The double table first: a double past float's range converted to float is undefined
    // behaviour, so the float table (BiasMath::table_float, which may round its own way) is made
    // only once every value fits, and is checked too.
    const int cols = max_distance + 1;
    const std::vector<double> exact = bias.table(nullptr, 0, 1, cols);
    size_t bad = exact.size();
    for (size_t i = 0; i < exact.size() && bad == exact.size(); ++i)
      if (std::abs(exact[i]) > kFloatMax) bad = i;
    if (bad == exact.size()) {
      const std::vector<float> table = bias.table_as<float>(nullptr, 0, 1, cols);
      for (size_t i = 0; i < table.size() && bad == exact.size(); ++i)
        if (!std::isfinite(table[i])) bad = i;
    }
    if (bad < exact.size())
      throw UsageError(fmt::format(
          "--pe-bias '{}' is {} at distance d = {}, head h = {}: beyond float32's largest finite "
          "value ({:.2g}), which --precision float32 computes in; write a bias within +-{:.2g} or "
          "run with --precision float64",
          c.pe_bias, exact[bad], bad % cols, bad / cols, kFloatMax, kFloatMax));
    return;
  }
  // A learned bias: the initial values of the tensors a setting fills (fire's threshold), tensor
  // by tensor in the block's order. Only then is the block made: t5's may be the huge table the
  // memory budget refuses after this check.
  const std::vector<EncodingTensor> tensors = encoding_math(c.pe).bias_tensors(c);
  if (std::none_of(tensors.begin(), tensors.end(),
                   [](const EncodingTensor& t) { return t.setting != nullptr; }))
    return;
  const std::vector<double> initial = bias.initial_parameters();
  size_t offset = 0;
  for (const EncodingTensor& t : tensors) {
    size_t n = 1;
    for (const int s : t.shape) n *= static_cast<size_t>(s);
    for (size_t i = offset; i < offset + n && t.setting; ++i)
      if (std::abs(initial[i]) > kFloatMax)  // compared in double: the cast would be undefined
        throw UsageError(fmt::format(
            "{} sets {} to {}, beyond float32's largest finite value ({:.2g}), which --precision "
            "float32 holds it in; give at most {:.2g} or run with --precision float64",
            t.setting, t.name, initial[i], kFloatMax, kFloatMax));
    offset += n;
  }
}

}  // namespace lenlab
