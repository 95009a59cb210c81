#include "models/custom_position_bias.hpp"

#include "core/error.hpp"
#include "core/named_registry.hpp"

namespace lenlab {

namespace {

NamedRegistry<CustomPositionBias>& registry() {
  static NamedRegistry<CustomPositionBias> r;
  return r;
}

}  // namespace

void register_custom_position_bias(std::shared_ptr<const CustomPositionBias> b) {
  if (!b || !b->f) throw UsageError("a custom position bias needs its function b(d, h)");
  const std::string name = b->name;
  registry().add(name, std::move(b), "pe_bias");
}

std::shared_ptr<const CustomPositionBias> find_custom_position_bias(const std::string& name) {
  return registry().find(name);
}

}  // namespace lenlab
