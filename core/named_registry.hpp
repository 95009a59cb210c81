#pragma once
// Functions written in a host language (the Python module's), registered under a name that a
// run's settings then give as "python:NAME": reparameterizations (reparam/custom_reparam.hpp) and
// fixed position biases (models/custom_position_bias.hpp), one registry of each.
#include <fmt/format.h>

#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.hpp"

namespace lenlab {

inline constexpr const char* kHostFunctionPrefix = "python:";

// NAME when `setting` is "python:NAME", else "".
inline std::string host_function_name(const std::string& setting) {
  const std::string prefix = kHostFunctionPrefix;
  return setting.rfind(prefix, 0) == 0 ? setting.substr(prefix.size()) : std::string();
}

template <class F>
class NamedRegistry {
 public:
  // Registers f under `name`, replacing one of the same name (a notebook cell run again). Throws
  // UsageError on a name that is not 1 to 64 letters, digits or '_': it becomes part of run ids.
  // `what` names the kind in that error ("reparam", "pe_bias").
  void add(const std::string& name, std::shared_ptr<const F> f, const char* what) {
    bool valid = !name.empty() && name.size() <= 64;
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!valid)
      throw UsageError(fmt::format(
          "{} name '{}' must be 1 to 64 letters, digits or '_' (it becomes part of run ids); give "
          "the function a name (def, not lambda) or pass {}_name=",
          what, name, what));
    std::lock_guard<std::mutex> lock(mutex_);
    map_[name] = std::move(f);
  }
  // The function registered under `name`, or null.
  std::shared_ptr<const F> find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = map_.find(name);
    return it == map_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const F>> map_;
};

}  // namespace lenlab
