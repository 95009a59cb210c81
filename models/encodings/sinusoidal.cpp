// Sinusoidal positions (Vaswani et al. 2017, "Attention Is All You Need", §3.5): a fixed table
// added to the token embedding, PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p /
// 10000^(2i/d)), p the token's position (BOS is position 0), d = d_model. No parameters and no
// table size: the model computes the rows a batch reaches (Model::prepare), at any length. The
// baseline of the ALiBi paper (Press et al. 2022), the randomized-positions paper (Ruoss et al.
// 2023) and the NoPE study (Kazemnejad et al. 2023).
#include <cmath>

#include "models/encodings/encoding_math.hpp"

namespace lenlab::encodings {

namespace {

// out [count, d_model]: rows first..first+count−1, in double. The angle p·10000^(−2i/d) is a
// product of two doubles (p exact below 2^53), a few ulps from the true angle at any position; the
// float model rounds the rows once (Model::prepare).
void sinusoidal_rows(int first, int count, int d_model, double* out) {
  for (int r = 0; r < count; ++r) {
    const double p = static_cast<double>(first + r);
    double* row = out + static_cast<size_t>(r) * d_model;
    for (int j = 0; j < d_model; j += 2) {
      const double angle = p * std::pow(10000.0, -static_cast<double>(j) / d_model);
      row[j] = std::sin(angle);
      if (j + 1 < d_model) row[j + 1] = std::cos(angle);
    }
  }
}

}  // namespace

extern const EncodingMath kSinusoidal{
    .absolute = AbsoluteTable::kFixed,
    .absolute_values = sinusoidal_rows,
};

}  // namespace lenlab::encodings
