// Experiment 06: the linear forward with its bias, Y = X · W + b, two ways on OpenBLAS's sgemm.
//   product first (lenlab before): sgemm with beta 0 (OpenBLAS clears Y in a pass of its own),
//                                  then a pass adding b to every row;
//   bias first (lenlab now):       b copied into every row, then sgemm adds X · W (beta 1).
// Each is checked against float64; then, per shape, the time of each, and how many outputs differ
// in their bits between the two (b + Σ against Σ + b: equal while sgemm sums the C products in
// one block, so the default model's runs keep their bytes).
#include <cblas.h>

#include <cstring>

#include "bench/small_gemm/common.hpp"

namespace {

using small_gemm::Shape;

void product_first(float* y, const float* x, const float* w, const float* b, int N, int C, int OC) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, OC, C, 1.f, x, C, w, OC, 0.f, y, OC);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) y[size_t(n) * OC + o] += b[o];
}

void bias_first(float* y, const float* x, const float* w, const float* b, int N, int C, int OC) {
  for (int n = 0; n < N; ++n) std::memcpy(y + size_t(n) * OC, b, sizeof(float) * OC);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, OC, C, 1.f, x, C, w, OC, 1.f, y, OC);
}

}  // namespace

int main() {
  const double peak = small_gemm::eigen_sgemm_peak();
  fmt::print(
      "06 OpenBLAS forward with bias: 1 thread; 512x512 Eigen sgemm on this core: {:.1f} "
      "GFLOP/s\n",
      peak * 1e-9);
  fmt::print("  {:<24} {:>14} {:>14} {:>9} {:>16}\n", "shape NxCxOC", "product first", "bias first",
             "speed-up", "outputs differ");
  int bad = 0;
  double t_product = 0, t_bias = 0;
  for (const Shape& s : small_gemm::all_shapes()) {
    const int N = s.N, C = s.C, OC = s.OC;
    auto x = small_gemm::random_buffer(size_t(N) * C, 1),
         w = small_gemm::random_buffer(size_t(C) * OC, 2), b = small_gemm::random_buffer(OC, 4);
    std::vector<double> ref(size_t(N) * OC);
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double acc = b[o];
        for (int i = 0; i < C; ++i) acc += double(x[size_t(n) * C + i]) * w[size_t(i) * OC + o];
        ref[size_t(n) * OC + o] = acc;
      }
    std::vector<float> y1(size_t(N) * OC), y2(size_t(N) * OC);
    product_first(y1.data(), x.data(), w.data(), b.data(), N, C, OC);
    bias_first(y2.data(), x.data(), w.data(), b.data(), N, C, OC);
    const double err =
        std::max(small_gemm::relative_error(y1, ref), small_gemm::relative_error(y2, ref));
    if (!(err < 1e-5)) {
      fmt::print("  {:<24} WRONG: relative error {:.3g}\n", s.name, err);
      ++bad;
      continue;
    }
    size_t differ = 0;
    for (size_t i = 0; i < y1.size(); ++i)
      differ += std::memcmp(&y1[i], &y2[i], sizeof(float)) != 0;
    const double flops = 2.0 * N * C * OC;
    const double tp = small_gemm::best_seconds(
        [&] { product_first(y1.data(), x.data(), w.data(), b.data(), N, C, OC); });
    const double tb = small_gemm::best_seconds(
        [&] { bias_first(y2.data(), x.data(), w.data(), b.data(), N, C, OC); });
    t_product += tp;
    t_bias += tb;
    fmt::print("  {:<24} {:9.1f} GF/s {:9.1f} GF/s {:8.2f}x {:>9} of {:>5}\n", s.name,
               flops / tp * 1e-9, flops / tb * 1e-9, tp / tb, differ, y1.size());
  }
  fmt::print("  all shapes together: bias first {:.2f}x product first\n", t_product / t_bias);
  return bad ? 1 : 0;
}
