#include "models/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "models/parameters.hpp"
#include "models/positional_encodings.hpp"
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

namespace {

// The encoding the checkpoint's metadata records (its run's config, as save_checkpoint's callers
// write it), or "" where it records none.
std::string recorded_encoding(const SafeTensors& st) {
  const auto config = st.metadata.find("config");
  if (config == st.metadata.end()) return "";
  const nlohmann::json j =
      nlohmann::json::parse(config->second, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("pe") || !j["pe"].is_string()) return "";
  return j["pe"].get<std::string>();
}

// UsageError unless the checkpoint holds exactly the model's tensors, by name, and records (if it
// records one) the model's encoding: a checkpoint of another encoding (a learned position table
// "wpe" under a rope manifest, say) is refused naming the tensors and both encodings.
void check_tensor_names(const std::filesystem::path& path, const ModelConfig& config,
                        const SafeTensors& st) {
  const std::string ours = positional_encoding_name(config.pe);
  const std::string theirs = recorded_encoding(st);
  std::set<std::string> wanted, present;
  for (const TensorInfo& t : parameter_layout(config)) wanted.insert(t.name);
  for (const NamedTensor& t : st.tensors) present.insert(t.name);
  std::vector<std::string> missing, unexpected;
  for (const std::string& name : wanted)
    if (!present.count(name)) missing.push_back(name);
  for (const std::string& name : present)
    if (!wanted.count(name)) unexpected.push_back(name);
  const std::string recorded =
      theirs.empty() ? "" : fmt::format(" (the checkpoint records encoding '{}')", theirs);
  if (!missing.empty() || !unexpected.empty()) {
    std::string what;
    if (!missing.empty()) what += fmt::format("missing tensors {}", fmt::join(missing, ", "));
    if (!unexpected.empty())
      what += fmt::format("{}unexpected tensors {}", what.empty() ? "" : "; ",
                          fmt::join(unexpected, ", "));
    throw UsageError(fmt::format(
        "{}: not the model its manifest describes (encoding '{}'){}: {}; the checkpoint and the "
        "manifest come from different runs, or the file was changed",
        path.string(), ours, recorded, what));
  }
  bool same = theirs.empty();
  try {  // by the encoding, not its spelling; a name this build does not know is not ours
    if (!same) same = parse_positional_encoding(theirs) == config.pe;
  } catch (const UsageError&) {
  }
  if (!same)
    throw UsageError(
        fmt::format("{}: the checkpoint records encoding '{}', its manifest's settings build a "
                    "model with encoding '{}'; the two come from different runs",
                    path.string(), theirs, ours));
}

}  // namespace

std::vector<double> load_checkpoint(const std::filesystem::path& path, const ModelConfig& config) {
  const SafeTensors st = load_safetensors(path);
  check_tensor_names(path, config, st);
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
