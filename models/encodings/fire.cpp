// FIRE (Li et al. 2023): b_h(i, δ) = f(ψ(δ) / ψ(max(L, i))), ψ(x) = log(c·x + 1), f an MLP
// 1 → W (ReLU) → H without an output bias (a constant per head is invisible to the softmax, so its
// gradient is 0 and Adam would move it by rounding noise alone), one per layer; its rows are the
// query's position i. Parameters, per layer: pe.fire.w1 [1, n_layer·W], b1 [n_layer, W],
// w2 [W, n_layer·H], c and threshold [n_layer], with c = softplus(raw) and L = softplus(raw) > 0;
// c starts at 1 and L at ModelConfig::fire_threshold (the training window), w1, w2 at
// N(0, 1/fan_in) (their first dimension is their fan-in, 1 and W; layer l's columns are l·W.. and
// l·H..), b1 at 0. At i = L exactly, L's branch of the max takes the gradient.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab::encodings {
namespace {

// ψ(x) = log(c·x + 1)
double psi(double c, double x) {
  return std::log1p(c * x);
}

// One layer's parameters within the block: offsets of w1 [1, n_layer·W], b1 [n_layer, W],
// w2 [W, n_layer·H], c and threshold [n_layer].
struct FireLayer {
  int W = 0, H = 0, layer = 0, n_layer = 0;
  const double* pe = nullptr;
  size_t b1 = 0, w2 = 0, c = 0, threshold = 0;  // w1 starts the block

  FireLayer(const ModelConfig& cfg, const double* block, int l)
      : W(cfg.fire_width), H(cfg.n_head), layer(l), n_layer(cfg.n_layer), pe(block) {
    const size_t L = n_layer;
    b1 = L * W;
    w2 = b1 + L * W;
    c = w2 + static_cast<size_t>(W) * L * H;
    threshold = c + L;
  }
  size_t w1_at(int k) const { return static_cast<size_t>(layer) * W + k; }
  size_t b1_at(int k) const { return b1 + static_cast<size_t>(layer) * W + k; }
  size_t w2_at(int k, int h) const {
    return w2 + static_cast<size_t>(k) * n_layer * H + static_cast<size_t>(layer) * H + h;
  }
  double c_value() const { return softplus(pe[c + layer]); }
  double threshold_value() const { return softplus(pe[threshold + layer]); }
};

class FireBias final : public BiasMath {
 public:
  explicit FireBias(const ModelConfig& c) : c_(c) {}

  std::vector<double> table(const double* pe, int t, int rows, int cols) const override {
    const int H = c_.n_head;
    std::vector<double> out(static_cast<size_t>(H) * rows * cols);
    const FireLayer f(c_, pe, t);
    const double c = f.c_value(), L = f.threshold_value();
    std::vector<double> hidden(f.W);
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < cols; ++d) {
        const double x = psi(c, d) / psi(c, std::max(L, static_cast<double>(r)));
        for (int k = 0; k < f.W; ++k)
          hidden[k] = std::max(0.0, pe[f.w1_at(k)] * x + pe[f.b1_at(k)]);
        for (int h = 0; h < H; ++h) {
          double v = 0;
          for (int k = 0; k < f.W; ++k) v += pe[f.w2_at(k, h)] * hidden[k];
          out[(static_cast<size_t>(h) * rows + r) * cols + d] = v;
        }
      }
    return out;
  }

  // b_h = Σ_k w2_kh·relu(z_k),  z_k = w1_k·x + b1_k,  x = ψ(δ)/ψ(m),  m = max(L, r),
  // ψ(y) = log(c·y + 1),  c = softplus(a_c),  L = softplus(a_L)
  void chain(const double* pe, int t, int rows, int cols, const double* dtable,
             double* dpe) const override {
    const int H = c_.n_head;
    const FireLayer f(c_, pe, t);
    const double c = f.c_value(), L = f.threshold_value();
    const size_t head_stride = static_cast<size_t>(rows) * cols;
    for (int r = 0; r < rows; ++r)
      for (int d = 0; d < cols; ++d) {
        const double* g = dtable + static_cast<size_t>(r) * cols + d;  // head h: g[h·head_stride]
        bool any = false;
        for (int h = 0; h < H && !any; ++h) any = g[h * head_stride] != 0;
        if (!any) continue;
        const bool threshold_wins = L >= r;
        const double m = threshold_wins ? L : r;
        const double psi_d = psi(c, d), psi_m = psi(c, m), x = psi_d / psi_m;
        double dx = 0;
        for (int k = 0; k < f.W; ++k) {
          const double z = pe[f.w1_at(k)] * x + pe[f.b1_at(k)];
          const double hidden = std::max(0.0, z);
          double dhidden = 0;
          for (int h = 0; h < H; ++h) {
            const double gh = g[h * head_stride];
            dpe[f.w2_at(k, h)] += gh * hidden;
            dhidden += gh * pe[f.w2_at(k, h)];
          }
          if (z <= 0) continue;  // ReLU: no gradient through an inactive unit
          dpe[f.w1_at(k)] += dhidden * x;
          dpe[f.b1_at(k)] += dhidden;
          dx += dhidden * pe[f.w1_at(k)];
        }
        // ∂x/∂c = (δ/(c·δ + 1)·ψ(m) − ψ(δ)·m/(c·m + 1)) / ψ(m)²;  ∂x/∂L = −ψ(δ)/ψ(m)²·c/(c·L + 1)
        const double dx_dc = (d / (c * d + 1) * psi_m - psi_d * m / (c * m + 1)) / (psi_m * psi_m);
        dpe[f.c + t] += dx * dx_dc * sigmoid(pe[f.c + t]);
        if (threshold_wins) {
          const double dx_dl = -psi_d / (psi_m * psi_m) * c / (c * L + 1);
          dpe[f.threshold + t] += dx * dx_dl * sigmoid(pe[f.threshold + t]);
        }
      }
  }

  void initial_values(double* block) const override {
    for (int l = 0; l < c_.n_layer; ++l) {
      const FireLayer f(c_, nullptr, l);
      block[f.c + l] = softplus_inverse(1.0);
      block[f.threshold + l] = softplus_inverse(c_.fire_threshold);
    }
  }

 private:
  ModelConfig c_;
};

}  // namespace

extern const EncodingMath kFire{
    .settings_key =
        [](const ModelConfig& c) { return fmt::format("{} {}", c.fire_threshold, c.fire_width); },
    .validate =
        [](const ModelConfig& c) {
          if (!(c.fire_threshold >= 1.0 && std::isfinite(c.fire_threshold)))
            throw UsageError(
                fmt::format("fire's threshold L must start at a finite number >= 1 token, got {}",
                            c.fire_threshold));
          if (c.fire_width <= 0)
            throw UsageError(fmt::format("fire's hidden width must be a positive integer, got {}",
                                         c.fire_width));
        },
    .make_bias = [](const ModelConfig& c) -> std::unique_ptr<BiasMath> {
      return std::make_unique<FireBias>(c);
    },
    .bias_tensors =
        [](const ModelConfig& c) {
          const int L = c.n_layer, W = c.fire_width, H = c.n_head;
          return std::vector<EncodingTensor>{
              {"pe.fire.w1", {1, L * W}, InitKind::kFanIn},
              {"pe.fire.b1", {L, W}, InitKind::kZero},
              {"pe.fire.w2", {W, L * H}, InitKind::kFanIn},
              {"pe.fire.c", {L}, InitKind::kEncoding},
              {"pe.fire.threshold", {L}, InitKind::kEncoding, "--fire-threshold"}};
        },
    .bias_tables = [](const ModelConfig& c) { return c.n_layer; },
    .by_query_position = true,
};

}  // namespace lenlab::encodings
