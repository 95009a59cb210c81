#include "models/position_bias.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "models/cpu/attention.hpp"
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

PositionBias::PositionBias(const ModelConfig& c) : config_(c) {
  learned_ = positional_encoding_info(c.pe).learned_bias;
  switch (c.pe) {
    case PositionalEncoding::kAlibi:
      slopes_ = cpu::alibi_slopes(c.n_head);
      break;
    case PositionalEncoding::kT5:
      n_tables_ = c.t5_per_layer ? c.n_layer : 1;
      break;
    case PositionalEncoding::kKerple:
      n_tables_ = c.n_layer;
      break;
    case PositionalEncoding::kBias:
      expression_ = std::make_unique<Expression>(c.pe_bias, std::vector<std::string>{"d", "h"});
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
  return p;
}

std::vector<double> PositionBias::table(const double* pe, int t, int cols) const {
  const int H = config_.n_head;
  std::vector<double> out(static_cast<size_t>(H) * cols);
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

void PositionBias::chain(const double* pe, int t, int cols, const double* dtable,
                         double* dpe) const {
  const int H = config_.n_head;
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

std::string position_bias_csv_text(const ModelConfig& c, const std::vector<double>& params,
                                   int max_distance) {
  const std::unique_ptr<PositionBias> bias = PositionBias::make(c);
  if (!bias) return "";
  const double* pe = nullptr;
  for (const TensorInfo& t : parameter_layout(c))
    if (t.name.rfind("pe.", 0) == 0) {
      pe = params.data() + t.offset;
      break;
    }
  const int cols = max_distance + 1;
  std::string out = "layer,head,distance,bias\n";
  for (int l = 0; l < c.n_layer; ++l) {
    const std::vector<double> table = bias->table(pe, bias->table_of_layer(l), cols);
    for (int h = 0; h < c.n_head; ++h)
      for (int d = 0; d < cols; ++d)
        out += fmt::format("{},{},{},{:.9g}\n", l, h, d, table[static_cast<size_t>(h) * cols + d]);
  }
  return out;
}

void check_bias_expression(const ModelConfig& c, int max_distance) {
  if (c.pe != PositionalEncoding::kBias) return;
  PositionBias(c).table(nullptr, 0, max_distance + 1);
}

}  // namespace lenlab
