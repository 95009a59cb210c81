#include "models/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "models/parameters.hpp"
#include "models/safetensors.hpp"

namespace lenlab {

template <class T>
void save_checkpoint(const std::filesystem::path& path, const ModelConfig& config, const T* params,
                     const std::map<std::string, std::string>& metadata) {
  SafeTensors st;
  st.metadata = metadata;
  for (const TensorInfo& t : parameter_layout(config)) {
    NamedTensor nt{t.name,
                   std::vector<int64_t>(t.shape.begin(), t.shape.end()),
                   {},
                   std::is_same_v<T, double> ? "F64" : "F32"};
    nt.data.assign(params + t.offset, params + t.offset + t.size);
    st.tensors.push_back(std::move(nt));
  }
  save_safetensors(path, st);
}

template void save_checkpoint(const std::filesystem::path&, const ModelConfig&, const float*,
                              const std::map<std::string, std::string>&);
template void save_checkpoint(const std::filesystem::path&, const ModelConfig&, const double*,
                              const std::map<std::string, std::string>&);

std::vector<double> load_checkpoint(const std::filesystem::path& path, const ModelConfig& config) {
  const SafeTensors st = load_safetensors(path);
  std::vector<double> params(parameter_count(config));
  for (const TensorInfo& t : parameter_layout(config)) {
    const NamedTensor& nt = st.at(t.name);
    const std::vector<int64_t> want(t.shape.begin(), t.shape.end());
    if (nt.shape != want)
      throw UsageError(fmt::format("{}: tensor '{}' has shape [{}], the model needs [{}]",
                                   path.string(), t.name, fmt::join(nt.shape, ", "),
                                   fmt::join(want, ", ")));
    std::copy(nt.data.begin(), nt.data.end(), params.begin() + t.offset);
  }
  return params;
}

template <class T>
void load_checkpoint(const std::filesystem::path& path, const ModelConfig& config, T* params) {
  const std::vector<double> values = load_checkpoint(path, config);
  std::copy(values.begin(), values.end(), params);
}

template void load_checkpoint(const std::filesystem::path&, const ModelConfig&, float*);
template void load_checkpoint(const std::filesystem::path&, const ModelConfig&, double*);

}  // namespace lenlab
