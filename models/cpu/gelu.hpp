#pragma once
// GELU, tanh approximation (as GPT-2): gelu(x) = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))).
// The forward also returns the tanh it computed, so the backward does not evaluate it again.
#include <Eigen/Core>
#include <cmath>

namespace lenlab::cpu {

inline constexpr double kGeluK = 0.7978845608028654;  // √(2/π)
inline constexpr double kGeluC = 0.044715;

// out [n] = gelu(inp); th [n] (may be null when no backward follows) = tanh(√(2/π)·(inp + c·inp³)),
// saved for the backward.
template <class T>
void gelu_forward(T* out, T* th, const T* inp, size_t n) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  Eigen::Map<const Array> x(inp, len);
  Eigen::Map<Array> y(out, len);
  if (!th) {
    y = T(0.5) * x * (T(1) + (T(kGeluK) * (x + T(kGeluC) * x.cube())).tanh());
    return;
  }
  Eigen::Map<Array> t(th, len);
  t = (T(kGeluK) * (x + T(kGeluC) * x.cube())).tanh();
  y = T(0.5) * x * (T(1) + t);
}

// Adds into dinp.
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* th, const T* dout, size_t n) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Index len = static_cast<Eigen::Index>(n);
  Eigen::Map<const Array> x(inp, len), t(th, len), dy(dout, len);
  Eigen::Map<Array> dx(dinp, len);
  // d/dx [x/2·(1 + tanh u)] with u = k(x + c·x³): (1 + tanh u)/2 + x/2·(1 − tanh²u)·k(1 + 3c·x²)
  dx += dy * (T(0.5) * (T(1) + t) +
              T(0.5) * x * (T(1) - t.square()) * T(kGeluK) * (T(1) + T(3 * kGeluC) * x.square()));
}

// y [n] += x [n] (the residual connections).
template <class T>
void add_inplace(T* y, const T* x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace lenlab::cpu
