#pragma once
// A fixed positional bias written in Python (the module's `pe_bias=f`): b(d, h) over an array of
// distances d for one head h, registered under a name. A run's settings give it as
// --pe-bias "python:NAME", and from there on it is a bias like an expression: PositionBias looks
// it up, checks it for finite values over every distance the run meets, and the run id carries
// the name.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace lenlab {

struct CustomPositionBias {
  std::string name;  // letters, digits and '_'
  // out[i] = b(d[i], head) for i < n. May throw: the host records its own error and raises it
  // once the engine returns.
  std::function<void(const double* d, size_t n, int head, double* out)> f;
};

// Registers b under b->name, replacing one of the same name. Throws UsageError on a bad name or a
// missing function.
void register_custom_position_bias(std::shared_ptr<const CustomPositionBias> b);
// The one registered under `name`, or null.
std::shared_ptr<const CustomPositionBias> find_custom_position_bias(const std::string& name);

}  // namespace lenlab
