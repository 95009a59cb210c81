#include "models/position_bias.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/named_registry.hpp"
#include "models/ops/tables.hpp"
#include "models/parameters.hpp"

namespace lenlab {

namespace {

double softplus(double x) {
  return x > 30 ? x : std::log1p(std::exp(x));
}
double softplus_inverse(double y) {
  return y > 30 ? y : std::log(std::expm1(y));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// FIRE's parameters of one layer within the block (models/parameters.hpp's layout): offsets of
// w1 [1, n_layer·W], b1 [n_layer, W], w2 [W, n_layer·H], c and threshold [n_layer].
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

// ψ(x) = log(c·x + 1)
double psi(double c, double x) {
  return std::log1p(c * x);
}

}  // namespace

int t5_bucket(int n, int n_buckets, int max_distance) {
  const int max_exact = n_buckets / 2;
  if (n < max_exact) return n;
  const float scaled = std::log(static_cast<float>(n) / static_cast<float>(max_exact)) /
                       static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact)) *
                       static_cast<float>(n_buckets - max_exact);
  const int bucket = max_exact + static_cast<int>(scaled);
  return bucket < n_buckets - 1 ? bucket : n_buckets - 1;
}

std::unique_ptr<PositionBias> PositionBias::make(const ModelConfig& c) {
  if (!positional_encoding_info(c.pe).distance_bias) return nullptr;
  return std::make_unique<PositionBias>(c);
}

int PositionBias::tables_of(const ModelConfig& c) {
  switch (c.pe) {
    case PositionalEncoding::kT5:
      return c.t5_per_layer ? c.n_layer : 1;
    case PositionalEncoding::kKerple:
    case PositionalEncoding::kFire:
      return c.n_layer;
    default:
      return 1;
  }
}

PositionBias::PositionBias(const ModelConfig& c) : config_(c) {
  learned_ = positional_encoding_info(c.pe).learned_bias;
  n_tables_ = tables_of(c);
  switch (c.pe) {
    case PositionalEncoding::kAlibi:
      slopes_ = ops::alibi_slopes(c.n_head);
      break;
    case PositionalEncoding::kT5:
    case PositionalEncoding::kKerple:
    case PositionalEncoding::kFire:
      break;
    case PositionalEncoding::kBias:
      if (const std::string name = host_function_name(c.pe_bias); !name.empty()) {
        custom_ = find_custom_position_bias(name);
        if (!custom_)
          throw UsageError(fmt::format(
              "--pe-bias '{}': no Python position bias named '{}' is registered in this process; "
              "it is given as pe_bias=f in the Python module (lenlab.train, and lenlab.load to "
              "evaluate a run trained with one)",
              c.pe_bias, name));
      } else {
        expression_ = std::make_unique<Expression>(c.pe_bias, std::vector<std::string>{"d", "h"});
      }
      break;
    default:
      throw std::logic_error("PositionBias: the encoding has no bias");
  }
}

size_t PositionBias::n_parameters() const {
  const size_t H = config_.n_head;
  switch (config_.pe) {
    case PositionalEncoding::kT5:
      return static_cast<size_t>(n_tables_) * config_.t5_buckets * H;
    case PositionalEncoding::kKerple:
      return 2 * static_cast<size_t>(n_tables_) * H;
    case PositionalEncoding::kFire: {
      const size_t W = config_.fire_width;
      return static_cast<size_t>(config_.n_layer) * (2 * W + W * H + 2);
    }
    default:
      return 0;
  }
}

std::vector<double> PositionBias::initial_parameters() const {
  std::vector<double> p(n_parameters(), 0.0);
  if (config_.pe == PositionalEncoding::kKerple) {
    const int H = config_.n_head;
    const size_t half = p.size() / 2;  // r1 block, then r2 block, each [n_layer, H]
    for (int t = 0; t < n_tables_; ++t)
      for (int h = 0; h < H; ++h) {
        p[static_cast<size_t>(t) * H + h] = softplus_inverse(2.0 * (h + 0.5) / H);
        p[half + static_cast<size_t>(t) * H + h] = softplus_inverse((h + 0.5) / H);
      }
  }
  if (config_.pe == PositionalEncoding::kFire)
    for (int l = 0; l < config_.n_layer; ++l) {
      const FireLayer f(config_, nullptr, l);
      p[f.c + l] = softplus_inverse(1.0);
      p[f.threshold + l] = softplus_inverse(config_.fire_threshold);
    }
  return p;
}

std::vector<double> PositionBias::table(const double* pe, int t, int rows, int cols) const {
  const int H = config_.n_head;
  std::vector<double> out(static_cast<size_t>(H) * rows * cols);
  if (custom_) {  // one call per head over every distance 0..cols−1 (one row)
    std::vector<double> distances(static_cast<size_t>(cols));
    for (int d = 0; d < cols; ++d) distances[static_cast<size_t>(d)] = d;
    for (int h = 0; h < H; ++h) {
      double* b = out.data() + static_cast<size_t>(h) * cols;
      custom_->f(distances.data(), distances.size(), h, b);
      for (int d = 0; d < cols; ++d)
        if (!std::isfinite(b[d]))
          throw UsageError(fmt::format(
              "the Python position bias '{}' is {} at distance d = {}, head h = {}; the bias must "
              "be finite at every distance a run meets (0 up to the longest test sequence)",
              custom_->name, b[d], d, h));
    }
    return out;
  }
  if (config_.pe == PositionalEncoding::kFire) {  // rows: query positions
    const FireLayer f(config_, pe, t);
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
  for (int h = 0; h < H; ++h)
    for (int d = 0; d < cols; ++d) {
      double& b = out[static_cast<size_t>(h) * cols + d];
      switch (config_.pe) {
        case PositionalEncoding::kAlibi:
          b = -slopes_[h] * d;
          break;
        case PositionalEncoding::kT5: {
          const int bucket = t5_bucket(d, config_.t5_buckets, config_.t5_max_distance);
          b = pe[(static_cast<size_t>(t) * config_.t5_buckets + bucket) * H + h];
          break;
        }
        case PositionalEncoding::kKerple: {
          const size_t half = n_parameters() / 2;
          const double r1 = softplus(pe[static_cast<size_t>(t) * H + h]);
          const double r2 = softplus(pe[half + static_cast<size_t>(t) * H + h]);
          b = -r1 * std::log1p(r2 * d);
          break;
        }
        case PositionalEncoding::kBias:
          b = (*expression_)({static_cast<double>(d), static_cast<double>(h)});
          if (!std::isfinite(b))
            throw UsageError(fmt::format(
                "--pe-bias '{}' is {} at distance d = {}, head h = {}; the bias must be finite at "
                "every distance a run meets (0 up to the longest test sequence)",
                config_.pe_bias, b, d, h));
          break;
        default:
          break;
      }
    }
  return out;
}

void PositionBias::chain(const double* pe, int t, int rows, int cols, const double* dtable,
                         double* dpe) const {
  const int H = config_.n_head;
  if (config_.pe == PositionalEncoding::kFire) {
    // b_h = Σ_k w2_kh·relu(z_k),  z_k = w1_k·x + b1_k,  x = ψ(δ)/ψ(m),  m = max(L, r),
    // ψ(y) = log(c·y + 1),  c = softplus(a_c),  L = softplus(a_L)
    const FireLayer f(config_, pe, t);
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
    return;
  }
  (void)rows;  // the other biases have one row
  for (int h = 0; h < H; ++h)
    for (int d = 0; d < cols; ++d) {
      const double g = dtable[static_cast<size_t>(h) * cols + d];
      if (g == 0) continue;
      switch (config_.pe) {
        case PositionalEncoding::kT5: {  // b = w[bucket(d), h]
          const int bucket = t5_bucket(d, config_.t5_buckets, config_.t5_max_distance);
          dpe[(static_cast<size_t>(t) * config_.t5_buckets + bucket) * H + h] += g;
          break;
        }
        case PositionalEncoding::kKerple: {  // b = −softplus(a1)·log(1 + softplus(a2)·d)
          const size_t half = n_parameters() / 2, i1 = static_cast<size_t>(t) * H + h;
          const double a1 = pe[i1], a2 = pe[half + i1];
          const double r1 = softplus(a1), r2 = softplus(a2);
          dpe[i1] += g * -std::log1p(r2 * d) * sigmoid(a1);
          dpe[half + i1] += g * -r1 * d / (1.0 + r2 * d) * sigmoid(a2);
          break;
        }
        default:
          break;
      }
    }
}

void check_bias_expression(const ModelConfig& c, int max_distance) {
  if (c.pe != PositionalEncoding::kBias) return;
  PositionBias(c).table(nullptr, 0, 1, max_distance + 1);
}

}  // namespace lenlab
