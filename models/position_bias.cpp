#include "models/position_bias.hpp"

#include <stdexcept>

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

void check_fixed_bias(const ModelConfig& c, int max_distance) {
  // Only a bias the user writes (the encoding needs it as a setting) can fail: the built-in fixed
  // ones (ALiBi) are finite everywhere, and tables for a million distances are not free.
  const PositionalEncodingInfo& info = positional_encoding_info(c.pe);
  if (!info.distance_bias() || info.learned_bias() || !info.needs_setting) return;
  PositionBias(c).table(nullptr, 0, 1, max_distance + 1);
}

}  // namespace lenlab
