#pragma once
// Table rows for the optimizer step as training runs it: each step grad_norm, then adamw_step on
// K models' flat parameters [K, P] (P = n + gap; the gap must stay untouched), with per-model
// settings, global-norm clipping, and models left untouched by a non-finite norm or loss.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/models/backend_cases_base.hpp"

namespace lenlab::test {

struct AdamWCase {
  int K = 1, n = 40, gap = 0, steps = 2;
  double clip = 0;            // clip_norm; 0: no clipping
  double weight_decay = 0.1;  // decay = lr·weight_decay, on the entries the mask marks
  int big = -1;               // this model's gradients ×1000, so its norm exceeds clip
  int inf_grad = -1;          // this model's gradients hold +inf at every step: left untouched
  int nan_loss = -1;          // this model's loss is NaN: left untouched
  bool losses = true;         // pass the losses (else null: only the norm decides)
  Tolerance tol{1e-6, 1e-5};
  bool fd = false;  // no backward

  std::string op() const { return "adamw_step"; }
  size_t P() const { return static_cast<size_t>(n) + gap; }
  std::string name() const {
    return cat("adamw_step K=", K, " n=", n, " P=", P(), " steps=", steps, " decay ", weight_decay,
               clip > 0 ? cat(" clip ", clip) : std::string(),
               big >= 0 ? cat(" model ", big, " clipped") : std::string(),
               inf_grad >= 0 ? cat(" model ", inf_grad, " inf gradient") : std::string(),
               nan_loss >= 0 ? cat(" model ", nan_loss, " NaN loss") : std::string(),
               losses ? "" : " no losses");
  }
  bool untouched(int k) const { return k == inf_grad || k == nan_loss; }
  // Model k's settings at step s (counted from t = 3, so the bias corrections are not the first).
  ops::AdamWStep settings(int s, int k) const {
    const int t = s + 3;
    ops::AdamWStep st;
    st.lr = static_cast<float>(1e-2 * (1 + 0.5 * k));
    st.beta1 = 0.9f;
    st.beta2 = 0.999f;
    st.one_minus_beta1 = 1 - st.beta1;  // of the float β, so that double and float agree
    st.one_minus_beta2 = 1 - st.beta2;
    st.eps = 1e-8f;
    st.decay = static_cast<float>(st.lr * weight_decay);
    st.c1 = static_cast<float>(1 / (1 - std::pow(0.9, t)));
    st.c2 = static_cast<float>(1 / (1 - std::pow(0.999, t)));
    st.clip_norm = clip;
    return st;
  }

  Host make() const {
    Rng rng(seed_of(name()));
    const size_t KP = K * P();
    Host h;
    h.real["params"] = randn(KP, rng);
    h.real["m1"] = randn(KP, rng, 1e-2);
    h.real["m2"] = randn(KP, rng, 1e-2);
    for (double& v : h.real["m2"]) v *= v;                     // second moments are ≥ 0
    auto& g = h.real["grads"] = randn(steps * KP, rng, 1e-2);  // [steps, K, P]
    for (int s = 0; s < steps; ++s)
      for (int k = 0; k < K; ++k)
        for (size_t i = 0; i < P(); ++i) {
          double& x = g[s * KP + k * P() + i];
          if (i >= static_cast<size_t>(n)) x = 1e3;  // the gap: not this model's gradients
          if (k == big) x *= 1000;
          if (k == inf_grad && i == 3) x = std::numeric_limits<double>::infinity();
        }
    for (int i = 0; i < n; ++i) h.real["mask"].push_back(i % 3 != 0);
    for (int k = 0; k < K; ++k)
      h.real["losses"].push_back(k == nan_loss ? std::numeric_limits<double>::quiet_NaN()
                                               : 1.0 + k);
    return h.finish();
  }

  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t KP = K * P();
    auto params = D::put(h.r("params")), m1 = D::put(h.r("m1")), m2 = D::put(h.r("m2"));
    auto grads = D::put(h.r("grads")), mask = D::put(h.r("mask"));
    auto loss = D::template put<double>(h.r("losses"));
    auto norms = D::template unset<double>(K);
    const ops::Models m{K, P()};
    std::vector<double> all_norms;  // [steps, K]
    for (int s = 0; s < steps; ++s) {
      std::vector<ops::AdamWStep> host(K);
      for (int k = 0; k < K; ++k) host[k] = settings(s, k);
      auto st = D::raw(host);
      const auto* g = grads.data() + s * KP;
      B::grad_norm(norms.data(), g, n, m);
      B::adamw_step(params.data(), g, m1.data(), m2.data(), mask.data(), st.data(), norms.data(),
                    losses ? loss.data() : nullptr, n, m);
      const std::vector<double> nk = D::get(norms, K);
      all_norms.insert(all_norms.end(), nk.begin(), nk.end());
    }
    return {{{"params", D::get(params, KP)},
             {"m1", D::get(m1, KP)},
             {"m2", D::get(m2, KP)},
             {"norms", all_norms}}};
  }

  void check(const Host& h, const Outputs& o, const Where& w) const {
    // Untouched models, and every model's gap, keep their values to the bit.
    size_t changed = 0;
    for (const char* t : {"params", "m1", "m2"})
      for (int k = 0; k < K; ++k)
        for (size_t i = untouched(k) ? 0 : n; i < P(); ++i)
          changed += o.get(t)[k * P() + i] != h.r(t)[k * P() + i];
    CHECK_MESSAGE(changed == 0, w.backend << " " << name() << ": " << changed
                                          << " entries changed that must not");
    if (w.reference) check_formula(h, o);
  }

  // The documented step (models/cpu/optimizer.hpp), in double, one entry at a time.
  void check_formula(const Host& h, const Outputs& o) const {
    std::vector<double> p = h.r("params"), m1 = h.r("m1"), m2 = h.r("m2");
    for (int s = 0; s < steps; ++s)
      for (int k = 0; k < K; ++k) {
        if (untouched(k)) continue;
        const ops::AdamWStep st = settings(s, k);
        const double* g = h.r("grads").data() + s * K * P() + k * P();
        double sum = 0;
        for (int i = 0; i < n; ++i) sum += g[i] * g[i];
        const double norm = std::sqrt(sum);
        // The row's clipping is what it says: only the big model's norm exceeds clip.
        if (clip > 0)
          REQUIRE_MESSAGE((norm > clip) == (k == big), "model " << k << " norm " << norm);
        const double scale = clip > 0 && norm > clip ? clip / (norm + 1e-6) : 1.0;
        for (int i = 0; i < n; ++i) {
          const size_t j = k * P() + i;
          p[j] -= double{st.decay} * p[j] * h.r("mask")[i];
          m1[j] = st.beta1 * m1[j] + st.one_minus_beta1 * (g[i] * scale);
          m2[j] = st.beta2 * m2[j] + st.one_minus_beta2 * std::pow(g[i] * scale, 2);
          p[j] -= st.lr * (m1[j] * st.c1) / (std::sqrt(m2[j] * st.c2) + st.eps);
        }
      }
    expect_close(name() + " params against the formula", o.get("params"), p, 1e-15, 1e-12);
    expect_close(name() + " m1 against the formula", o.get("m1"), m1, 1e-15, 1e-12);
    expect_close(name() + " m2 against the formula", o.get("m2"), m2, 1e-15, 1e-12);
  }
};

}  // namespace lenlab::test
