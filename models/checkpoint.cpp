#include "models/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
    // Training never saves a non-finite weight (a diverged run keeps no model): one here means
    // the file was changed, and every result computed from it would be inf or NaN.
    for (size_t i = 0; i < nt.data.size(); ++i)
      if (!std::isfinite(nt.data[i]))
        throw UsageError(fmt::format(
            "{}: tensor '{}' holds {} at index {}; a model's weights are finite numbers (lenlab "
            "never saves others: was the file changed?)",
            path.string(), t.name, nt.data[i], i));
    std::copy(nt.data.begin(), nt.data.end(), params.begin() + t.offset);
  }
  return params;
}

template <class T>
void load_checkpoint(const std::filesystem::path& path, const ModelConfig& config, T* params) {
  const std::vector<double> values = load_checkpoint(path, config);
  for (size_t i = 0; i < values.size(); ++i)
    if (std::abs(values[i]) > static_cast<double>(std::numeric_limits<T>::max()))
      throw UsageError(fmt::format(
          "{}: weight {} is {}, past the largest float32 ({}) that this run computes in",
          path.string(), i, values[i], std::numeric_limits<T>::max()));
  std::copy(values.begin(), values.end(), params);
}

template void load_checkpoint(const std::filesystem::path&, const ModelConfig&, float*);
template void load_checkpoint(const std::filesystem::path&, const ModelConfig&, double*);

}  // namespace lenlab
