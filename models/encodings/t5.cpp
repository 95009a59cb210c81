// T5's relative bias (Raffel et al. 2020): a learned scalar per head and distance bucket, half the
// buckets exact distances, the rest log-spaced up to max_distance (farther keys share the last).
// Parameters: pe.t5.bias [tables, n_buckets, n_head], zero at the start (the model starts as NoPE);
// one table shared by the layers (T5's), or one per layer with t5_per_layer. A bucket no training
// step reached stays at 0 (EncodingMath::zero_until_trained): with a training window of ~18 tokens
// and the default 32 buckets up to distance 128, the buckets of distances >= 19 never train.
#include <fmt/format.h>

#include "core/error.hpp"
#include "models/encodings/encoding_math.hpp"
#include "models/encodings/t5_bucket.hpp"

namespace lenlab {

int t5_bucket(int n, int n_buckets, int max_distance) {
  const int max_exact = n_buckets / 2;
  if (n < max_exact) return n;
  const float scaled = std::log(static_cast<float>(n) / static_cast<float>(max_exact)) /
                       static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact)) *
                       static_cast<float>(n_buckets - max_exact);
  const int bucket = max_exact + static_cast<int>(scaled);
  return bucket < n_buckets - 1 ? bucket : n_buckets - 1;
}

namespace encodings {
namespace {

int tables(const ModelConfig& c) {
  return c.t5_per_layer ? c.n_layer : 1;
}

class T5Bias final : public BiasMath {
 public:
  explicit T5Bias(const ModelConfig& c) : c_(c) {}

  // b_h(δ) = w[t, bucket(δ), h]
  std::vector<double> table(const double* pe, int t, int, int cols) const override {
    const int H = c_.n_head;
    std::vector<double> out(static_cast<size_t>(H) * cols);
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < cols; ++d) out[static_cast<size_t>(h) * cols + d] = pe[at(t, d, h)];
    return out;
  }
  void chain(const double*, int t, int, int cols, const double* dtable,
             double* dpe) const override {
    for (int h = 0; h < c_.n_head; ++h)
      for (int d = 0; d < cols; ++d)
        if (const double g = dtable[static_cast<size_t>(h) * cols + d]; g != 0)
          dpe[at(t, d, h)] += g;
  }

 private:
  size_t at(int t, int d, int h) const {
    const int bucket = t5_bucket(d, c_.t5_buckets, c_.t5_max_distance);
    return (static_cast<size_t>(t) * c_.t5_buckets + bucket) * c_.n_head + h;
  }
  ModelConfig c_;
};

}  // namespace

extern const EncodingMath kT5{
    .settings_key =
        [](const ModelConfig& c) {
          return fmt::format("{} {} {}", c.t5_buckets, c.t5_max_distance, c.t5_per_layer);
        },
    .validate =
        [](const ModelConfig& c) {
          if (c.t5_buckets < 2)
            throw UsageError(
                fmt::format("--t5-buckets must be >= 2 (half of them exact distances, "
                            "the rest log-spaced), got {}",
                            c.t5_buckets));
          if (c.t5_max_distance <= c.t5_buckets / 2)
            throw UsageError(fmt::format(
                "--t5-max-distance must be > --t5-buckets / 2 = {} (the exact buckets cover "
                "distances below that; the log-spaced ones run from there to max_distance), got {}",
                c.t5_buckets / 2, c.t5_max_distance));
        },
    .make_bias = [](const ModelConfig& c) -> std::unique_ptr<BiasMath> {
      return std::make_unique<T5Bias>(c);
    },
    .bias_tensors =
        [](const ModelConfig& c) {
          return std::vector<EncodingTensor>{
              {"pe.t5.bias", {tables(c), c.t5_buckets, c.n_head}, InitKind::kZero}};
        },
    .bias_tables = tables,
    .zero_until_trained = true,
};

}  // namespace encodings
}  // namespace lenlab
