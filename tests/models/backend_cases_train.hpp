#pragma once
// Table rows for the losses and the optimizer. The losses WRITE their gradient (they start the
// backward), so their gradient buffers start at a sentinel that must be overwritten; targets,
// weights and losses are double on every backend.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/models/backend_cases_base.hpp"

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

// loss [K] = Σ_p w_p (KL(p‖q) + KL(q‖p)) + e_p (H(p) + H(q)) over pairs (a, b) of the R rows, p and
// q the rows' softmax; ADDS into dlogits (prefilled) at the paired rows, leaves every other row as
// it was. Entropy weights: e_p = w_p (the SCE; `entropy` "sce"), 0 (the divergence alone, "kl") or
// drawn apart from w_p ("free"). `padded`: one pair per model of index −1 and one of both weights
// 0 (skipped). `same`: each pair's second row a copy of its first, where SCE(p, p) = 2H(p) (not 0:
// the cross-entropy is not a divergence) and the divergence is 0.
struct PairAlignmentCase {
  int K = 1, R = 6, V = 5, P = 2;
  bool padded = false, same = false;
  std::string entropy = "sce";
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "pair_alignment_loss"; }
  std::string name() const {
    return cat("pair_alignment_loss K=", K, " R=", R, " V=", V, " P=", P, " ", entropy,
               padded ? " padded" : "", same ? " identical rows" : "");
  }
  Host make() const {
    Rng rng(seed_of(name()));
    Host h;
    h.real["logits"] = randn(static_cast<size_t>(K) * R * V, rng, 2.0);
    h.real["dlogits0"] = randn(static_cast<size_t>(K) * R * V, rng);
    for (int k = 0; k < K; ++k) {
      std::vector<int> rows(R);  // disjoint pairs: consecutive entries of a shuffled row list
      for (int r = 0; r < R; ++r) rows[r] = r;
      for (int r = R - 1; r > 0; --r) std::swap(rows[r], rows[rng.uniform_int(0, r)]);
      for (int p = 0; p < P; ++p) {
        h.ints["first"].push_back(rows[2 * p]);
        h.ints["second"].push_back(rows[2 * p + 1]);
        h.real["weight"].push_back(0.2 + rng.uniform());
        h.real["entropy_weight"].push_back(entropy == "sce"  ? h.real["weight"].back()
                                           : entropy == "kl" ? 0.0
                                                             : 0.2 + rng.uniform());
        if (same)
          for (int v = 0; v < V; ++v)
            h.real["logits"][(static_cast<size_t>(k) * R + rows[2 * p + 1]) * V + v] =
                h.real["logits"][(static_cast<size_t>(k) * R + rows[2 * p]) * V + v];
      }
      if (padded) {
        h.ints["first"][static_cast<size_t>(k) * P] = -1;
        h.real["weight"][static_cast<size_t>(k) * P + P - 1] = 0;
        h.real["entropy_weight"][static_cast<size_t>(k) * P + P - 1] = 0;
      }
    }
    h.real["ones"] = std::vector<double>(K, 1.0);
    h.grads = {{"logits", "dlogits", "dlogits0"}};
    h.loss = {{"loss", "ones"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t n = static_cast<size_t>(K) * R * V;
    auto logits = D::put(h.r("logits")), dlogits = D::put(h.r("dlogits0"));
    auto first = D::ints(h.i("first")), second = D::ints(h.i("second"));
    auto weight = D::template put<double>(h.r("weight"));
    auto entropy_weight = D::template put<double>(h.r("entropy_weight"));
    auto loss = D::template unset<double>(K);
    B::pair_alignment_loss(dlogits.data(), loss.data(), logits.data(), first.data(), second.data(),
                           weight.data(), entropy_weight.data(), P, R, V, ops::Models{K, 0});
    return {{{"dlogits", D::get(dlogits, n)}, {"loss", D::get(loss, K)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const auto &first = h.i("first"), &second = h.i("second");
    const auto &wt = h.r("weight"), &et = h.r("entropy_weight"), &z = h.r("logits"),
               &dz = o.get("dlogits");
    const auto& dz0 = h.r("dlogits0");
    for (int k = 0; k < K; ++k) {
      std::vector<bool> paired(R, false);
      for (int p = 0; p < P; ++p) {
        const size_t i = static_cast<size_t>(k) * P + p;
        if (first[i] >= 0 && (wt[i] != 0 || et[i] != 0))
          paired[first[i]] = paired[second[i]] = true;
      }
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < V && !paired[r]; ++v) {
          const size_t at = (static_cast<size_t>(k) * R + r) * V + v;
          CHECK_MESSAGE(dz[at] == static_cast<double>(static_cast<float>(dz0[at])),
                        w.backend << ": dlogits of a row in no pair changed");
        }
    }
    if (!w.reference) return;
    // The loss from its definition, and the SCE another way: −⟨q, log p⟩ − ⟨p, log q⟩ =
    // KL(p‖q) + KL(q‖p) + H(p) + H(q).
    auto softmax = [&](size_t row) {
      std::vector<double> p(V);
      double norm = 0;
      for (int v = 0; v < V; ++v) norm += p[v] = std::exp(z[row * V + v]);
      for (double& x : p) x /= norm;
      return p;
    };
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int p = 0; p < P; ++p) {
        const size_t i = static_cast<size_t>(k) * P + p;
        if (first[i] < 0 || (wt[i] == 0 && et[i] == 0)) continue;
        const auto a = softmax(static_cast<size_t>(k) * R + first[i]);
        const auto b = softmax(static_cast<size_t>(k) * R + second[i]);
        double kl_ab = 0, kl_ba = 0, h_a = 0, h_b = 0, sce = 0;
        for (int v = 0; v < V; ++v) {
          kl_ab += a[v] * std::log(a[v] / b[v]);
          kl_ba += b[v] * std::log(b[v] / a[v]);
          h_a -= a[v] * std::log(a[v]);
          h_b -= b[v] * std::log(b[v]);
          sce -= b[v] * std::log(a[v]) + a[v] * std::log(b[v]);
        }
        CHECK(sce == doctest::Approx(kl_ab + kl_ba + h_a + h_b).epsilon(1e-12));
        if (same) CHECK(kl_ab + kl_ba == doctest::Approx(0.0).epsilon(1e-12));
        sum += wt[i] * (kl_ab + kl_ba) + et[i] * (h_a + h_b);
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
