#pragma once
// GELU, tanh approximation (as GPT-2): gelu(x) = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))).
#include <Eigen/Core>
#include <cmath>

namespace lenlab::cpu {

template <class T>
void gelu_forward(T* out, const T* inp, size_t n) {
  const T k = static_cast<T>(0.7978845608028654);  // √(2/π)
  Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> x(inp, n);
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> y(out, n);
  y = T(0.5) * x * (T(1) + (k * (x + T(0.044715) * x * x * x)).tanh());
}

// Adds into dinp.
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* dout, size_t n) {
  const T k = static_cast<T>(0.7978845608028654);
  Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> x(inp, n), dy(dout, n);
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> dx(dinp, n);
  // d/dx [x/2·(1 + tanh u)] with u = k(x + c·x³): (1 + tanh u)/2 + x/2·(1 - tanh²u)·k(1 + 3c·x²)
  const Eigen::Array<T, Eigen::Dynamic, 1> th = (k * (x + T(0.044715) * x * x * x)).tanh();
  dx += dy * (T(0.5) * (T(1) + th) +
              T(0.5) * x * (T(1) - th * th) * k * (T(1) + T(3 * 0.044715) * x * x));
}

}  // namespace lenlab::cpu
