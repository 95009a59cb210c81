#pragma once
// Shared harness of the small-GEMM experiments (bench/small_gemm/NN_*.cpp, llm.c's dev/ style):
// the linear layers' shapes of lenlab's models, a float64 reference, and best-of-k timing against
// the same core's 512x512 sgemm. Each numbered file is one candidate; it checks itself against the
// reference, then prints GFLOP/s per shape. Nothing here is part of the library.
//
// A linear layer, all row-major: Y [N, OC] = X [N, C] · W [C, OC] + b. Training runs three
// products per layer and step:
//   forward   Y  = X · W          (2·N·C·OC flops)
//   dX       dX += dY · Wᵀ
//   dW       dW += Xᵀ · dY
// N is the packed token count of a batch: 64 sequences of 1..10 bits with BOS and EOS average
// 7.5 tokens, so N = 480 in the default model; the last layer runs only the 64 read rows past
// attention (N = 64).
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace small_gemm {

struct Shape {
  std::string name;
  int N, C, OC;
};

// The linear layers of a model of width d (d_ff = 4d): attention's qkv and output projection, the
// MLP's two layers, at N rows; `last` adds the last layer's rows past attention.
inline std::vector<Shape> model_shapes(int d, int N, int read_rows) {
  return {{fmt::format("d{} qkv    {}x{}x{}", d, N, d, 3 * d), N, d, 3 * d},
          {fmt::format("d{} proj   {}x{}x{}", d, N, d, d), N, d, d},
          {fmt::format("d{} fc     {}x{}x{}", d, N, d, 4 * d), N, d, 4 * d},
          {fmt::format("d{} fc2    {}x{}x{}", d, N, 4 * d, d), N, 4 * d, d},
          {fmt::format("d{} fc/last{}x{}x{}", d, read_rows, d, 4 * d), read_rows, d, 4 * d},
          {fmt::format("d{} fc2/last{}x{}x{}", d, read_rows, 4 * d, d), read_rows, 4 * d, d}};
}

inline std::vector<Shape> all_shapes() {
  std::vector<Shape> out;
  for (int d : {64, 128, 256})
    for (const Shape& s : model_shapes(d, 480, 64)) out.push_back(s);
  return out;
}

// One candidate: three products on raw row-major float buffers. dx and dw ADD into their outputs.
// A candidate that fuses the backward gives `backward` (both at once) and leaves dx, dw empty.
struct Candidate {
  std::string name;
  std::function<void(float* y, const float* x, const float* w, int N, int C, int OC)> forward;
  std::function<void(float* dx, const float* dy, const float* w, int N, int C, int OC)> dx;
  std::function<void(float* dw, const float* x, const float* dy, int N, int C, int OC)> dw;
  std::function<void(float* dx, float* dw, const float* x, const float* dy, const float* w, int N,
                     int C, int OC)>
      backward = {};
};

using Clock = std::chrono::steady_clock;

// Best seconds per call of f over 5 rounds of ~40 ms each.
template <class F>
double best_seconds(F&& f) {
  f();
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    int calls = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < 0.04);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

inline double eigen_sgemm_peak() {
  const int n = 512;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  return 2.0 * n * n * n / best_seconds([&] { c.noalias() = a * b; });
}

inline std::vector<float> random_buffer(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Largest |got − want| / (|want|max + tiny) of got against a float64 product.
inline double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

// Checks the three products on one shape against float64 loops; returns the worst relative error.
inline double check(const Candidate& c, const Shape& s) {
  const int N = s.N, C = s.C, OC = s.OC;
  auto x = random_buffer(size_t(N) * C, 1), w = random_buffer(size_t(C) * OC, 2),
       dy = random_buffer(size_t(N) * OC, 3);
  std::vector<double> y_ref(size_t(N) * OC, 0), dx_ref(size_t(N) * C, 0.5),
      dw_ref(size_t(C) * OC, 0.25);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < C; ++i)
      for (int o = 0; o < OC; ++o) {
        y_ref[size_t(n) * OC + o] += double(x[size_t(n) * C + i]) * w[size_t(i) * OC + o];
        dx_ref[size_t(n) * C + i] += double(dy[size_t(n) * OC + o]) * w[size_t(i) * OC + o];
        dw_ref[size_t(i) * OC + o] += double(x[size_t(n) * C + i]) * dy[size_t(n) * OC + o];
      }
  std::vector<float> y(size_t(N) * OC), dx(size_t(N) * C, 0.5f), dw(size_t(C) * OC, 0.25f);
  c.forward(y.data(), x.data(), w.data(), N, C, OC);
  if (c.backward) {
    c.backward(dx.data(), dw.data(), x.data(), dy.data(), w.data(), N, C, OC);
  } else {
    c.dx(dx.data(), dy.data(), w.data(), N, C, OC);
    c.dw(dw.data(), x.data(), dy.data(), N, C, OC);
  }
  return std::max(
      {relative_error(y, y_ref), relative_error(dx, dx_ref), relative_error(dw, dw_ref)});
}

// Checks, then times every shape; prints GFLOP/s per product and the fraction of the peak.
inline int run(const Candidate& c) {
  const double peak = eigen_sgemm_peak();
  fmt::print("{}: 1 thread; 512x512 Eigen sgemm on this core: {:.1f} GFLOP/s\n", c.name,
             peak * 1e-9);
  fmt::print("  {:<24} {:>9} {:>9} {:>9} {:>9} {:>7}\n", "shape NxCxOC", "forward", "dX", "dW",
             "all 3", "% peak");
  int bad = 0;
  double total_flops = 0, total_seconds = 0;
  for (const Shape& s : all_shapes()) {
    const double err = check(c, s);
    if (!(err < 1e-5)) {
      fmt::print("  {:<24} WRONG: relative error {:.3g}\n", s.name, err);
      ++bad;
      continue;
    }
    const int N = s.N, C = s.C, OC = s.OC;
    auto x = random_buffer(size_t(N) * C, 1), w = random_buffer(size_t(C) * OC, 2),
         dy = random_buffer(size_t(N) * OC, 3);
    std::vector<float> y(size_t(N) * OC), dx(size_t(N) * C), dw(size_t(C) * OC);
    const double flops = 2.0 * N * C * OC;
    const double tf = best_seconds([&] { c.forward(y.data(), x.data(), w.data(), N, C, OC); });
    double tx, tw;  // a fused backward's time is shown halved in both columns
    if (c.backward) {
      tx = tw = 0.5 * best_seconds([&] {
                  c.backward(dx.data(), dw.data(), x.data(), dy.data(), w.data(), N, C, OC);
                });
    } else {
      tx = best_seconds([&] { c.dx(dx.data(), dy.data(), w.data(), N, C, OC); });
      tw = best_seconds([&] { c.dw(dw.data(), x.data(), dy.data(), N, C, OC); });
    }
    const double all = 3 * flops / (tf + tx + tw);
    total_flops += 3 * flops;
    total_seconds += tf + tx + tw;
    fmt::print("  {:<24} {:9.1f} {:9.1f} {:9.1f} {:9.1f} {:6.0f}%\n", s.name, flops / tf * 1e-9,
               flops / tx * 1e-9, flops / tw * 1e-9, all * 1e-9, 100 * all / peak);
  }
  fmt::print("  GFLOP/s per product; all shapes together: {:.1f} GFLOP/s ({:.0f} % of the peak)\n",
             total_flops / total_seconds * 1e-9, 100 * total_flops / total_seconds / peak);
  return bad ? 1 : 0;
}

}  // namespace small_gemm
