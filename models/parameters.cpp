#include "models/parameters.hpp"

namespace lenlab {

std::vector<TensorInfo> parameter_layout(const ModelConfig& c) {
  std::vector<TensorInfo> out;
  ParameterTensors<float> dummy;
  size_t offset = 0;
  visit_parameters(
      c, dummy,
      [&](const std::string& name, const std::vector<int>& shape, float*&, InitKind init) {
        size_t n = 1;
        for (int s : shape) n *= static_cast<size_t>(s);
        out.push_back({name, shape, offset, n, init});
        offset += n;
      });
  return out;
}

size_t parameter_count(const ModelConfig& c) {
  const auto layout = parameter_layout(c);
  return layout.empty() ? 0 : layout.back().offset + layout.back().size;
}

}  // namespace lenlab
