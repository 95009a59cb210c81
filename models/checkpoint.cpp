#include "models/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "models/safetensors.hpp"

namespace lenlab {

void save_checkpoint(const std::filesystem::path& path, const Transformer<float>& model,
                     const std::map<std::string, std::string>& metadata) {
  SafeTensors st;
  st.metadata = metadata;
  for (const TensorInfo& t : parameter_layout(model.config())) {
    NamedTensor nt{t.name, std::vector<int64_t>(t.shape.begin(), t.shape.end()), {}};
    nt.data.assign(model.params().begin() + t.offset, model.params().begin() + t.offset + t.size);
    st.tensors.push_back(std::move(nt));
  }
  save_safetensors(path, st);
}

void load_checkpoint(const std::filesystem::path& path, Transformer<float>& model) {
  const SafeTensors st = load_safetensors(path);
  for (const TensorInfo& t : parameter_layout(model.config())) {
    const NamedTensor& nt = st.at(t.name);
    const std::vector<int64_t> want(t.shape.begin(), t.shape.end());
    if (nt.shape != want)
      throw UsageError(fmt::format("{}: tensor '{}' has shape [{}], the model needs [{}]",
                                   path.string(), t.name, fmt::join(nt.shape, ", "),
                                   fmt::join(want, ", ")));
    std::copy(nt.data.begin(), nt.data.end(), model.params().begin() + t.offset);
  }
}

}  // namespace lenlab
