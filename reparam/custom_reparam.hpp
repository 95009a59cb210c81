#pragma once
// Reparameterizations written in a host language (the Python module's `reparam=(f, f_inv)`): f
// and, optionally, f⁻¹ as functions over arrays, registered under a name. A run's settings name one
// as "python:NAME", so from there on it is a reparam like a built-in or an expression:
// Reparam::make looks it up, check_domain checks it the same way, run ids and manifests carry the
// name.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/named_registry.hpp"

namespace lenlab {

inline constexpr const char* kCustomReparamPrefix = kHostFunctionPrefix;

struct CustomReparam {
  std::string name;  // letters, digits and '_'
  // out[i] = f(in[i]) for i < n (NaN where f is undefined). Must not throw: a host-language error
  // is recorded by the host and written as NaN, and raised once the engine returns.
  using ArrayFunction = std::function<void(const double* in, double* out, size_t n)>;
  ArrayFunction f;
  ArrayFunction inverse;  // empty: inverted numerically, as an expression without an inverse
};

// Registers r under r->name, replacing one of the same name (a notebook cell run again). Throws
// UsageError on a name that is not letters, digits and '_', or a missing f.
void register_custom_reparam(std::shared_ptr<const CustomReparam> r);
// The one registered under `name`, or null.
std::shared_ptr<const CustomReparam> find_custom_reparam(const std::string& name);

}  // namespace lenlab
