#pragma once
// Table rows for the row-wise operations: linear, layer norm, GELU, the residual add. They treat
// padding rows like any row, so their cases need no packed batch: K models of N rows each.
#include <cmath>
#include <string>
#include <vector>

#include "tests/models/backend_cases_base.hpp"

namespace lenlab::test {

// out [K, N, OC] = x [K, N, C] · w [C, OC] + b [OC]; w then b in each model's P-element block.
struct LinearCase {
  int K = 1, N = 5, C = 4, OC = 3;
  int gap = 0;  // P = C·OC + OC + gap: the parameter stride, larger than the tensors
  bool bias = true;
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "linear"; }
  size_t P() const { return static_cast<size_t>(C) * OC + OC + gap; }
  std::string name() const {
    return cat("linear K=", K, " N=", N, " C=", C, " OC=", OC, " P=", P(),
               bias ? " bias" : " no bias");
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const size_t KN = static_cast<size_t>(K) * N;
    Host h;
    h.real["x"] = randn(KN * C, rng);
    h.real["p"] = randn(K * P(), rng, 0.5);
    h.real["dout"] = randn(KN * OC, rng);
    h.real["dx0"] = randn(KN * C, rng);
    h.real["dp0"] = randn(K * P(), rng);
    h.grads = {{"x", "dx", "dx0"}, {"p", "dp", "dp0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t KN = static_cast<size_t>(K) * N;
    auto x = D::put(h.r("x")), p = D::put(h.r("p")), dout = D::put(h.r("dout"));
    auto dx = D::put(h.r("dx0")), dp = D::put(h.r("dp0")), out = D::unset(KN * OC);
    const ops::Models m{K, P()};
    const size_t b = static_cast<size_t>(C) * OC;  // the bias, within a model's block
    B::linear_forward(out.data(), x.data(), p.data(), bias ? p.data() + b : nullptr, N, C, OC, m);
    B::linear_backward(dx.data(), dp.data(), bias ? dp.data() + b : nullptr, dout.data(), x.data(),
                       p.data(), N, C, OC, m);
    return {
        {{"out", D::get(out, KN * OC)}, {"dx", D::get(dx, KN * C)}, {"dp", D::get(dp, K * P())}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    if (!w.reference) return;
    std::vector<double> out(static_cast<size_t>(K) * N * OC);
    for (int k = 0; k < K; ++k)
      for (int r = 0; r < N; ++r)
        for (int j = 0; j < OC; ++j) {
          const double* p = h.r("p").data() + k * P();
          const double* x = h.r("x").data() + (static_cast<size_t>(k) * N + r) * C;
          double y = bias ? p[C * OC + j] : 0.0;
          for (int c = 0; c < C; ++c) y += x[c] * p[c * OC + j];
          out[(static_cast<size_t>(k) * N + r) * OC + j] = y;
        }
    expect_formula(name() + " out", o.get("out"), out);
  }
};

// out [K, N, C] = (x − mean)·rstd ⊙ g + b; gain then bias in each model's P-element block.
struct LayerNormCase {
  int K = 1, N = 4, C = 6;
  int gap = 0;  // P = 2C + gap
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "layernorm"; }
  size_t P() const { return 2 * static_cast<size_t>(C) + gap; }
  std::string name() const { return cat("layernorm K=", K, " N=", N, " C=", C, " P=", P()); }
  Host make() const {
    Rng rng(seed_of(name()));
    const size_t KN = static_cast<size_t>(K) * N;
    Host h;
    // Rows of scale 2 around a mean of their own, so the mean subtraction matters.
    h.real["x"] = randn(KN * C, rng, 2.0);
    for (size_t t = 0; t < KN; ++t) {
      const double shift = 3 * rng.normal();
      for (int c = 0; c < C; ++c) h.real["x"][t * C + c] += shift;
    }
    h.real["p"] = randn(K * P(), rng);
    h.real["dout"] = randn(KN * C, rng);
    h.real["dx0"] = randn(KN * C, rng);
    h.real["dp0"] = randn(K * P(), rng);
    h.grads = {{"x", "dx", "dx0"}, {"p", "dp", "dp0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t KN = static_cast<size_t>(K) * N;
    auto x = D::put(h.r("x")), p = D::put(h.r("p")), dout = D::put(h.r("dout"));
    auto dx = D::put(h.r("dx0")), dp = D::put(h.r("dp0"));
    auto out = D::unset(KN * C), mean = D::unset(KN), rstd = D::unset(KN);
    const ops::Models m{K, P()};
    B::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), p.data(), p.data() + C, N,
                         C, m);
    B::layernorm_backward(dx.data(), dp.data(), dp.data() + C, dout.data(), x.data(), p.data(),
                          mean.data(), rstd.data(), N, C, m);
    return {{{"out", D::get(out, KN * C)},
             {"mean", D::get(mean, KN)},
             {"rstd", D::get(rstd, KN)},
             {"dx", D::get(dx, KN * C)},
             {"dp", D::get(dp, K * P())}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    if (!w.reference) return;
    const size_t KN = static_cast<size_t>(K) * N;
    std::vector<double> out(KN * C), mean(KN), rstd(KN);
    for (size_t t = 0; t < KN; ++t) {
      const double* x = h.r("x").data() + t * C;
      const double* p = h.r("p").data() + (t / N) * P();
      double mu = 0, var = 0;
      for (int c = 0; c < C; ++c) mu += x[c] / C;
      for (int c = 0; c < C; ++c) var += (x[c] - mu) * (x[c] - mu) / C;
      mean[t] = mu;
      rstd[t] = 1 / std::sqrt(var + 1e-5);
      for (int c = 0; c < C; ++c) out[t * C + c] = (x[c] - mu) * rstd[t] * p[c] + p[C + c];
    }
    expect_formula(name() + " out", o.get("out"), out);
    expect_formula(name() + " mean", o.get("mean"), mean);
    expect_formula(name() + " rstd", o.get("rstd"), rstd);
  }
};

// GELU (tanh approximation) over n entries, with and without the saved tanh; x[0] = 1.
struct GeluCase {
  int n = 40;
  double scale = 2.0;  // of the inputs: the tails matter
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "gelu"; }
  std::string name() const { return cat("gelu n=", n, " scale ", scale); }
  Host make() const {
    Rng rng(seed_of(name()));
    Host h;
    h.real["x"] = randn(n, rng, scale);
    h.real["x"][0] = 1.0;  // gelu(1), checked against its known value
    h.real["dout"] = randn(n, rng);
    h.real["dx0"] = randn(n, rng);
    h.grads = {{"x", "dx", "dx0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    auto x = D::put(h.r("x")), dout = D::put(h.r("dout")), dx = D::put(h.r("dx0"));
    auto out = D::unset(n), th = D::unset(n), out_alone = D::unset(n);
    B::gelu_forward(out.data(), th.data(), x.data(), n);
    B::gelu_forward(out_alone.data(), nullptr, x.data(), n);  // inference: no tanh kept
    B::gelu_backward(dx.data(), x.data(), th.data(), dout.data(), n);
    return {{{"out", D::get(out, n)},
             {"tanh", D::get(th, n)},
             {"out without tanh", D::get(out_alone, n)},
             {"dx", D::get(dx, n)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    if (w.reference) {
      std::vector<double> out(n), th(n);
      for (int i = 0; i < n; ++i) {
        const double x = h.r("x")[i];
        th[i] = std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x));
        out[i] = 0.5 * x * (1 + th[i]);
      }
      expect_formula(name() + " out", o.get("out"), out);
      expect_formula(name() + " tanh", o.get("tanh"), th);
    }
    // gelu(1) = 1/2·(1 + tanh(√(2/π)·1.044715)), to double precision.
    const double expected = 0.8411919906082768, got = o.get("out")[0];
    CHECK_MESSAGE(std::abs(got - expected) <= (w.reference ? 1e-15 : 1e-7),
                  w.backend << ": gelu(1) = " << got << ", not " << expected);
  }
};

// y [n] += x [n] (the residual add): a float sum of two floats is the double sum rounded once.
struct AddCase {
  int n = 50;
  Tolerance tol{0.0, 6e-8};
  bool fd = false;  // no backward

  std::string op() const { return "add_inplace"; }
  std::string name() const { return cat("add_inplace n=", n); }
  Host make() const {
    Rng rng(seed_of(name()));
    Host h;
    h.real["y"] = randn(n, rng);
    h.real["x"] = randn(n, rng);
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    auto y = D::put(h.r("y")), x = D::put(h.r("x"));
    B::add_inplace(y.data(), x.data(), n);
    return {{{"y", D::get(y, n)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    if (!w.reference) return;
    size_t wrong = 0;
    for (int i = 0; i < n; ++i) wrong += o.get("y")[i] != h.r("y")[i] + h.r("x")[i];
    CHECK_MESSAGE(wrong == 0, "add_inplace: " << wrong << " sums differ from y + x");
  }
};

}  // namespace lenlab::test
