#include "reparam/custom_reparam.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "core/error.hpp"

namespace lenlab {

namespace {

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<const CustomReparam>>& registry() {
  static std::map<std::string, std::shared_ptr<const CustomReparam>> r;
  return r;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

void register_custom_reparam(std::shared_ptr<const CustomReparam> r) {
  if (!r || !r->f) throw UsageError("a custom reparam needs its function f");
  if (!valid_name(r->name))
    throw UsageError(fmt::format(
        "reparam name '{}' must be 1 to 64 letters, digits or '_' (it becomes part of run ids); "
        "give the function a name (def, not lambda) or pass reparam_name=",
        r->name));
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[r->name] = std::move(r);
}

std::shared_ptr<const CustomReparam> find_custom_reparam(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

}  // namespace lenlab
