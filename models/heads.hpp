#pragma once
// The heads, as layers of their own: each reads chosen rows of the final residual stream [K, N, d]
// (gather), normalises them with the shared final layer norm, and maps them to its output:
//   scalar head  z [K, R]     = GELU(LN_f(x_r)·W1 + b1)·w2 + b2     (regression: MSE)
//   token head   z [K, R, V]  = LN_f(x_r)·W + b                     (logits: cross-entropy)
// Which rows is data (tasks/batch.hpp): the EOS row of each sequence, every answer row, every row.
// Forward and backward side by side; backward adds into the parameter gradients and into dx.
#include <cstddef>

#include "models/config.hpp"
#include "models/ops/args.hpp"
#include "models/parameters.hpp"

namespace lenlab {

enum class HeadKind { kScalar, kToken };

template <class B>
class Head {
 public:
  using T = typename B::Scalar;
  explicit Head(HeadKind kind) : kind_(kind) {}

  // out [K, R] (scalar) or [K, R, V] (token) from rows `rows` [K, R] (−1: padding) of x [K, N, d].
  // keep = false (inference) skips what only the backward needs.
  void forward(T* out, const T* x, const int* rows, int R, int N, const ModelConfig& c,
               const ParameterTensors<T>& w, ops::Models m, bool keep) {
    const int d = c.d_model;
    const size_t Rd = static_cast<size_t>(m.count) * R * d;
    R_ = R;
    N_ = N;
    for (auto* v : {&x_, &ln_, &h_, &g_, &th_}) B::reserve(*v, Rd);
    for (auto* v : {&mean_, &rstd_}) B::reserve(*v, static_cast<size_t>(m.count) * R);
    B::gather_rows_forward(x_.data(), x, rows, R, N, d, m);
    B::layernorm_forward(ln_.data(), keep ? mean_.data() : nullptr, keep ? rstd_.data() : nullptr,
                         x_.data(), w.lnf_g, w.lnf_b, R, d, m);
    if (kind_ == HeadKind::kToken) {
      B::linear_forward(out, ln_.data(), w.lm_w, w.lm_b, R, d, c.vocab_size, m);
      return;
    }
    B::linear_forward(h_.data(), ln_.data(), w.head_w1, w.head_b1, R, d, d, m);
    B::gelu_forward(g_.data(), keep ? th_.data() : nullptr, h_.data(), Rd);
    B::linear_forward(out, g_.data(), w.head_w2, w.head_b2, R, d, 1, m);
  }

  // dout: dLoss/dout of the last forward. Adds into dx [K, N, d] and the gradients g.
  void backward(T* dx, const T* dout, const int* rows, const ModelConfig& c,
                const ParameterTensors<T>& w, ParameterTensors<T>& g, ops::Models m) {
    const int d = c.d_model, R = R_;
    const size_t Rd = static_cast<size_t>(m.count) * R * d;
    for (auto* v : {&dln_, &dh_, &dg_, &dx_}) B::reserve(*v, Rd);
    B::fill_zero(dln_.data(), Rd);
    if (kind_ == HeadKind::kToken) {
      // logits = ln·W + b
      B::linear_backward(dln_.data(), g.lm_w, g.lm_b, dout, ln_.data(), w.lm_w, R, d, c.vocab_size,
                         m);
    } else {
      // out = g·w2 + b2
      B::fill_zero(dg_.data(), Rd);
      B::linear_backward(dg_.data(), g.head_w2, g.head_b2, dout, g_.data(), w.head_w2, R, d, 1, m);
      // g = gelu(h)
      B::fill_zero(dh_.data(), Rd);
      B::gelu_backward(dh_.data(), h_.data(), th_.data(), dg_.data(), Rd);
      // h = ln·W1 + b1
      B::linear_backward(dln_.data(), g.head_w1, g.head_b1, dh_.data(), ln_.data(), w.head_w1, R, d,
                         d, m);
    }
    // ln = layernorm(x_rows)
    B::fill_zero(dx_.data(), Rd);
    B::layernorm_backward(dx_.data(), g.lnf_g, g.lnf_b, dln_.data(), x_.data(), w.lnf_g,
                          mean_.data(), rstd_.data(), R, d, m);
    // x_rows = x[rows]
    B::gather_rows_backward(dx, dx_.data(), rows, R, N_, d, m);
  }

 private:
  template <class U>
  using Buffer = typename B::template Buffer<U>;
  HeadKind kind_;
  int R_ = 0, N_ = 0;
  Buffer<T> x_, ln_, mean_, rstd_, h_, g_, th_;  // [K, R, d] ([K, R] for mean, rstd)
  Buffer<T> dln_, dh_, dg_, dx_;                 // [K, R, d]
};

}  // namespace lenlab
