#pragma once
// Table rows for the losses and the optimizer. The losses WRITE their gradient (they start the
// backward), so their gradient buffers start at a sentinel that must be overwritten; targets,
// weights and losses are double on every backend.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/backend_cases_base.hpp"

namespace lenlab::test {

inline constexpr double kSentinel = 5.0;  // what a written (not added-into) gradient starts from

// loss [K] = Σ_r w (pred − target)², dpred [K, R] = 2 w (pred − target).
struct MseCase {
  int K = 1, R = 6;
  bool zero_weights = false;  // the last model's last rows have weight 0 (padding)
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "mse_loss"; }
  std::string name() const {
    return cat("mse_loss K=", K, " R=", R, zero_weights ? " rows of weight 0" : "");
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const size_t n = static_cast<size_t>(K) * R;
    Host h;
    h.real["pred"] = randn(n, rng);
    h.real["target"] = randn(n, rng);
    for (size_t i = 0; i < n; ++i) h.real["weight"].push_back((0.1 + rng.uniform()) / R);
    if (zero_weights)
      for (size_t i = n - R / 2; i < n; ++i) h.real["weight"][i] = 0;
    h.real["ones"] = std::vector<double>(K, 1.0);  // dL/dloss
    h.grads = {{"pred", "dpred", ""}};
    h.loss = {{"loss", "ones"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t n = static_cast<size_t>(K) * R;
    auto pred = D::put(h.r("pred")), dpred = D::put(std::vector<double>(n, kSentinel));
    auto target = D::template put<double>(h.r("target"));
    auto weight = D::template put<double>(h.r("weight"));
    auto loss = D::template unset<double>(K);
    B::mse_loss(dpred.data(), loss.data(), pred.data(), target.data(), weight.data(), R,
                ops::Models{K, 0});
    return {{{"dpred", D::get(dpred, n)}, {"loss", D::get(loss, K)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const auto &wt = h.r("weight"), &dpred = o.get("dpred");
    for (size_t i = 0; i < wt.size(); ++i)
      if (wt[i] == 0) CHECK_MESSAGE(dpred[i] == 0.0, w.backend << ": dpred of a weight-0 row");
    if (!w.reference) return;
    for (int k = 0; k < K; ++k) {  // the formula, in double
      double sum = 0;
      for (int r = 0; r < R; ++r) {
        const size_t i = static_cast<size_t>(k) * R + r;
        sum += wt[i] * std::pow(h.r("pred")[i] - h.r("target")[i], 2);
      }
      CHECK(o.get("loss")[k] == doctest::Approx(sum).epsilon(1e-12));
    }
  }
};

// loss [K] = Σ_r w (logsumexp(z_r) − z_r,y), dlogits [K, R, V] = w (softmax(z_r) − onehot(y));
// rows with label −1 or weight 0 are skipped (gradient 0).
struct CrossEntropyCase {
  int K = 1, R = 5, V = 7;
  bool skipped_rows = false;  // a row of label −1 and a row of weight 0 in every model
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "cross_entropy_loss"; }
  std::string name() const {
    return cat("cross_entropy_loss K=", K, " R=", R, " V=", V, skipped_rows ? " skipped rows" : "");
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const size_t n = static_cast<size_t>(K) * R;
    Host h;
    h.real["logits"] = randn(n * V, rng, 2.0);
    for (size_t i = 0; i < n; ++i) {
      h.ints["labels"].push_back(static_cast<int>(rng.uniform_int(0, V - 1)));
      h.real["weight"].push_back((0.1 + rng.uniform()) / R);
    }
    if (skipped_rows)
      for (int k = 0; k < K; ++k) {
        h.ints["labels"][static_cast<size_t>(k) * R + 1] = -1;
        h.real["weight"][static_cast<size_t>(k) * R + R - 1] = 0;
      }
    h.real["ones"] = std::vector<double>(K, 1.0);
    h.grads = {{"logits", "dlogits", ""}};
    h.loss = {{"loss", "ones"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t n = static_cast<size_t>(K) * R * V;
    auto logits = D::put(h.r("logits")), dlogits = D::put(std::vector<double>(n, kSentinel));
    auto labels = D::ints(h.i("labels"));
    auto weight = D::template put<double>(h.r("weight"));
    auto loss = D::template unset<double>(K);
    B::cross_entropy_loss(dlogits.data(), loss.data(), logits.data(), labels.data(), weight.data(),
                          R, V, ops::Models{K, 0});
    return {{{"dlogits", D::get(dlogits, n)}, {"loss", D::get(loss, K)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const auto& labels = h.i("labels");
    const auto &wt = h.r("weight"), &z = h.r("logits"), &dz = o.get("dlogits");
    for (size_t i = 0; i < labels.size(); ++i)
      for (int v = 0; v < V && (labels[i] < 0 || wt[i] == 0); ++v)
        CHECK_MESSAGE(dz[i * V + v] == 0.0, w.backend << ": dlogits of a skipped row");
    if (!w.reference) return;
    for (int k = 0; k < K; ++k) {  // the formula, in double
      double sum = 0;
      for (int r = 0; r < R; ++r) {
        const size_t i = static_cast<size_t>(k) * R + r;
        if (labels[i] < 0) continue;
        double norm = 0;
        for (int v = 0; v < V; ++v) norm += std::exp(z[i * V + v]);
        sum += wt[i] * (std::log(norm) - z[i * V + labels[i]]);
      }
      CHECK(o.get("loss")[k] == doctest::Approx(sum).epsilon(1e-12));
    }
  }
};

// norms [K] = ‖model k's n gradients‖; the gap past them (stride P = n + gap) holds large values
// that must not count.
struct GradNormCase {
  int K = 1, n = 100, gap = 0;
  Tolerance tol{0.0, 1e-6};
  bool fd = false;  // no backward

  std::string op() const { return "grad_norm"; }
  size_t P() const { return static_cast<size_t>(n) + gap; }
  std::string name() const { return cat("grad_norm K=", K, " n=", n, " P=", P()); }
  Host make() const {
    Rng rng(seed_of(name()));
    Host h;
    h.real["g"] = randn(K * P(), rng);
    for (int k = 0; k < K; ++k)
      for (int i = n; i < static_cast<int>(P()); ++i) h.real["g"][k * P() + i] = 1e3;
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    auto g = D::put(h.r("g"));
    auto norms = D::template unset<double>(K);
    B::grad_norm(norms.data(), g.data(), n, ops::Models{K, P()});
    return {{{"norms", D::get(norms, K)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    if (!w.reference) return;
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += std::pow(h.r("g")[k * P() + i], 2);
      CHECK(o.get("norms")[k] == doctest::Approx(std::sqrt(sum)).epsilon(1e-12));
    }
  }
};

}  // namespace lenlab::test
