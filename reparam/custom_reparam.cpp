#include "reparam/custom_reparam.hpp"

#include "core/error.hpp"
#include "core/named_registry.hpp"

namespace lenlab {

namespace {

NamedRegistry<CustomReparam>& registry() {
  static NamedRegistry<CustomReparam> r;
  return r;
}

}  // namespace

void register_custom_reparam(std::shared_ptr<const CustomReparam> r) {
  if (!r || !r->f) throw UsageError("a custom reparam needs its function f");
  const std::string name = r->name;
  registry().add(name, std::move(r), "reparam");
}

std::shared_ptr<const CustomReparam> find_custom_reparam(const std::string& name) {
  return registry().find(name);
}

}  // namespace lenlab
