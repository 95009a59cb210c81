#include "models/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "models/parameters.hpp"
#include "models/safetensors.hpp"

namespace lenlab {

void save_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                     const float* params, const std::map<std::string, std::string>& metadata) {
  SafeTensors st;
  st.metadata = metadata;
  for (const TensorInfo& t : parameter_layout(config)) {
    NamedTensor nt{t.name, std::vector<int64_t>(t.shape.begin(), t.shape.end()), {}};
    nt.data.assign(params + t.offset, params + t.offset + t.size);
    st.tensors.push_back(std::move(nt));
  }
  save_safetensors(path, st);
}

void load_checkpoint(const std::filesystem::path& path, const ModelConfig& config, float* params) {
  const SafeTensors st = load_safetensors(path);
  for (const TensorInfo& t : parameter_layout(config)) {
    const NamedTensor& nt = st.at(t.name);
    const std::vector<int64_t> want(t.shape.begin(), t.shape.end());
    if (nt.shape != want)
      throw UsageError(fmt::format("{}: tensor '{}' has shape [{}], the model needs [{}]",
                                   path.string(), t.name, fmt::join(nt.shape, ", "),
                                   fmt::join(want, ", ")));
    std::copy(nt.data.begin(), nt.data.end(), params + t.offset);
  }
}

}  // namespace lenlab
