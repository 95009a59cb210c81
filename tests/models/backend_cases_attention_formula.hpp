#pragma once
// Attention as models/ops/args.hpp defines it, written out directly in double, one (model,
// sequence, head, query) at a time and with RoPE angles computed afresh (no table): what the
// reference backend's attention must equal, so that a mistake the forward and the backward share
// (which finite differences cannot see) still shows.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/models/backend_cases_base.hpp"

namespace lenlab::test {

struct AttentionFormula {
  int d = 0, n_head = 0;
  bool alibi = false;
  int bias_rows = 0;  // > 0: h.r("bias") [n_head, bias_rows, bias_cols] adds b(h, row, δ)
  int bias_cols = 0;
  bool seq_scale = false;
  bool scale_bias = false;  // the sequence's scale multiplies the bias too (paper 002's τ)
  int n_global = 0, n_local = 0, max_distance = 0;
  bool rope_by_distance = false;  // AttentionArgs::rope_cos: rotate by the (capped) δ_ij
  bool rope_before = false;       // rope_forward: q_i by pos_i, k_j by pos_j

  // (x0, x1) pairs of one head's hd values rotated by angle·θ_m, θ_m = 10000^(−2m/hd).
  static std::vector<double> rotate(const double* x, int hd, double angle) {
    std::vector<double> y(x, x + hd);
    for (int m = 0; m < hd / 2; ++m) {
      const double a = angle * std::pow(10000.0, -2.0 * m / hd);
      y[2 * m] = x[2 * m] * std::cos(a) - x[2 * m + 1] * std::sin(a);
      y[2 * m + 1] = x[2 * m] * std::sin(a) + x[2 * m + 1] * std::cos(a);
    }
    return y;
  }

  // out [K, N, d] (padding rows 0); probabilities in ProbLayout's order, each model's used blocks
  // back to back: [K][S][n_head][L, L].
  void compute(const Host& h, const Packed& pk, std::vector<double>& out,
               std::vector<double>& probs) const {
    const int hd = d / n_head;
    const std::vector<double>& qkv = h.r("qkv");
    out.assign(static_cast<size_t>(pk.K) * pk.N * d, 0.0);
    probs.clear();
    for (int k = 0; k < pk.K; ++k)
      for (int s = 0; s < pk.S; ++s) {
        const int first = pk.model_offsets(k)[s], L = pk.model_offsets(k)[s + 1] - first;
        auto row = [&](int i) { return static_cast<size_t>(k) * pk.N + first + i; };
        auto pos = [&](int i) { return pk.positions[row(i)]; };
        const double scale = seq_scale ? h.r("seq_scale")[static_cast<size_t>(k) * pk.S + s] : 1.0;
        for (int head = 0; head < n_head; ++head) {
          const double slope = alibi ? h.r("slopes")[head] : 0.0;
          for (int i = 0; i < L; ++i) {
            std::vector<double> p(L, 0.0);
            std::vector<bool> seen(L, false);
            double mx = -INFINITY;
            for (int j = 0; j <= i; ++j) {
              if (n_local > 0 && !(j < n_global || i - j < n_local)) continue;
              int delta = pos(i) - pos(j);
              if (max_distance > 0) delta = std::min(delta, max_distance);
              const double* q = qkv.data() + row(i) * 3 * d + head * hd;
              const double* key = qkv.data() + row(j) * 3 * d + d + head * hd;
              std::vector<double> qr(q, q + hd), kr(key, key + hd);
              if (rope_by_distance) qr = rotate(q, hd, delta);
              if (rope_before) {
                qr = rotate(q, hd, pos(i));
                kr = rotate(key, hd, pos(j));
              }
              double dot = 0;
              for (int c = 0; c < hd; ++c) dot += qr[c] * kr[c];
              double b = -slope * delta;
              if (bias_rows > 0)
                b += h.r(
                    "bias")[(static_cast<size_t>(head) * bias_rows + (bias_rows > 1 ? pos(i) : 0)) *
                                bias_cols +
                            delta];
              p[j] =
                  scale * dot / std::sqrt(static_cast<double>(hd)) + (scale_bias ? scale : 1.0) * b;
              seen[j] = true;
              mx = std::max(mx, p[j]);
            }
            double sum = 0;
            for (int j = 0; j < L; ++j) sum += p[j] = seen[j] ? std::exp(p[j] - mx) : 0.0;
            for (int j = 0; j < L; ++j) {
              p[j] /= sum;
              const double* v = qkv.data() + row(j) * 3 * d + 2 * d + head * hd;
              for (int c = 0; c < hd; ++c) out[row(i) * d + head * hd + c] += p[j] * v[c];
            }
            probs.insert(probs.end(), p.begin(), p.end());
          }
        }
      }
  }
};

}  // namespace lenlab::test
