// The float linear layers' kernels (models/cpu/blas_gemm.hpp): OpenBLAS and Eigen give the float64
// product within float rounding on every shape a model makes (empty rows, one output column, the
// default model's), calls from several threads at once give each thread the bytes it gets alone,
// and the rule that keeps OpenBLAS off cores its kernel is not tuned for.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "models/cpu/blas_gemm.hpp"
#include "models/cpu/linear.hpp"

using namespace lenlab;
using cpu::GemmKernel;

namespace {

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

bool have_openblas() {
  return cpu::gemm_kernel_description().rfind("Eigen (this build has no OpenBLAS", 0) != 0;
}

// Restores the process's automatic choice when a test case ends.
struct KernelScope {
  explicit KernelScope(GemmKernel k) { cpu::set_gemm_kernel(k); }
  ~KernelScope() { cpu::set_gemm_kernel(GemmKernel::kAuto); }
};

struct Products {
  std::vector<float> y, dx, dw, db;
};

// linear_forward and linear_backward in float on the current kernel. dx, dw and db start from
// fixed values, so the test sees that the backward adds into them.
Products run_linear(const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& b, const std::vector<float>& dy, int N, int C,
                    int OC) {
  Products p{std::vector<float>(size_t(N) * OC, 9.f), std::vector<float>(size_t(N) * C, 0.5f),
             std::vector<float>(size_t(C) * OC, 0.25f), std::vector<float>(OC, 1.f)};
  cpu::linear_forward<float>(p.y.data(), x.data(), w.data(), b.data(), N, C, OC);
  cpu::linear_backward<float>(p.dx.data(), p.dw.data(), p.db.data(), dy.data(), x.data(), w.data(),
                              N, C, OC);
  return p;
}

// Largest |got − want| over the largest |want|.
double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

}  // namespace

TEST_CASE("float linear layers on Eigen and on OpenBLAS give the float64 products") {
  std::vector<GemmKernel> kernels = {GemmKernel::kEigen};
  if (have_openblas())
    kernels.push_back(GemmKernel::kOpenBlas);
  else
    MESSAGE("OpenBLAS not checked: this build has none (libopenblas-openmp-dev)");
  struct Shape {
    int N, C, OC;
  };
  // No rows; one output column (the scalar head); odd sizes; the default model's MLP at N = 480.
  for (const Shape s : {Shape{0, 4, 3}, Shape{5, 7, 1}, Shape{33, 17, 9}, Shape{480, 64, 256},
                        Shape{64, 256, 64}}) {
    const int N = s.N, C = s.C, OC = s.OC;
    const auto x = random_floats(size_t(N) * C, 1), w = random_floats(size_t(C) * OC, 2),
               b = random_floats(OC, 3), dy = random_floats(size_t(N) * OC, 4);
    std::vector<double> y(size_t(N) * OC), dx(size_t(N) * C, 0.5), dw(size_t(C) * OC, 0.25),
        db(OC, 1.0);
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) {
        double acc = b[o];
        for (int i = 0; i < C; ++i) acc += double(x[size_t(n) * C + i]) * w[size_t(i) * OC + o];
        y[size_t(n) * OC + o] = acc;
        db[o] += dy[size_t(n) * OC + o];
        for (int i = 0; i < C; ++i) {
          dx[size_t(n) * C + i] += double(dy[size_t(n) * OC + o]) * w[size_t(i) * OC + o];
          dw[size_t(i) * OC + o] += double(x[size_t(n) * C + i]) * dy[size_t(n) * OC + o];
        }
      }
    for (const GemmKernel k : kernels) {
      KernelScope scope(k);
      CAPTURE(N);
      CAPTURE(C);
      CAPTURE(OC);
      CAPTURE(cpu::gemm_kernel_description());
      const Products p = run_linear(x, w, b, dy, N, C, OC);
      CHECK(rel_error(p.y, y) < 1e-5);
      CHECK(rel_error(p.dx, dx) < 1e-5);
      CHECK(rel_error(p.dw, dw) < 1e-5);
      CHECK(rel_error(p.db, db) < 1e-5);
    }
  }
}

TEST_CASE("products called from several threads at once: each thread gets what it gets alone") {
  if (!have_openblas()) {
    MESSAGE("skipped: this build has no OpenBLAS (libopenblas-openmp-dev)");
    return;
  }
  KernelScope scope(GemmKernel::kOpenBlas);
  // Side-by-side runs of a sweep are threads of one process. Debian's serial OpenBLAS guards no
  // buffer: two threads calling it back to back, as here, got 8 % of their products wrong.
  // Every thread runs its products on as many OpenMP threads as this one computes the references
  // with: OpenBLAS splits a product's sums by its team, so another team size gives other last bits
  // (an earlier test's run leaves this thread at its own count, a new thread starts at the
  // machine's), which is not the race this test looks for.
  const int team = omp_get_max_threads();
  const int M[2] = {480, 480}, N[2] = {192, 64}, K[2] = {64, 256};
  std::vector<std::vector<float>> a(2), b(2), alone(2);
  for (int t = 0; t < 2; ++t) {
    a[t] = random_floats(size_t(M[t]) * K[t], 50 + t);
    b[t] = random_floats(size_t(K[t]) * N[t], 60 + t);
    alone[t].assign(size_t(M[t]) * N[t], 0.f);
    cpu::blas_sgemm(false, false, M[t], N[t], K[t], a[t].data(), K[t], b[t].data(), N[t], 0.f,
                    alone[t].data(), N[t]);
  }
  std::vector<int> wrong(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      omp_set_num_threads(team);
      std::vector<float> c(alone[t].size());
      for (int rep = 0; rep < 4000; ++rep) {
        cpu::blas_sgemm(false, false, M[t], N[t], K[t], a[t].data(), K[t], b[t].data(), N[t], 0.f,
                        c.data(), N[t]);
        if (c != alone[t]) ++wrong[t];
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);

  // The linear layers themselves, four threads of different shapes, forward and backward.
  const int rows[4] = {480, 200, 64, 333}, in[4] = {64, 128, 256, 64}, out[4] = {256, 128, 64, 192};
  std::vector<Products> one(4);
  std::vector<std::vector<float>> xs(4), ws(4), bs(4), dys(4);
  for (int t = 0; t < 4; ++t) {
    xs[t] = random_floats(size_t(rows[t]) * in[t], 10 + t);
    ws[t] = random_floats(size_t(in[t]) * out[t], 20 + t);
    bs[t] = random_floats(out[t], 30 + t);
    dys[t] = random_floats(size_t(rows[t]) * out[t], 40 + t);
    one[t] = run_linear(xs[t], ws[t], bs[t], dys[t], rows[t], in[t], out[t]);
  }
  std::vector<int> mismatches(4, 0);
  threads.clear();
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      omp_set_num_threads(team);
      for (int rep = 0; rep < 300; ++rep) {
        const Products p = run_linear(xs[t], ws[t], bs[t], dys[t], rows[t], in[t], out[t]);
        if (p.y != one[t].y || p.dx != one[t].dx || p.dw != one[t].dw) ++mismatches[t];
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    CAPTURE(t);
    CHECK(mismatches[t] == 0);
  }
}

TEST_CASE("OpenBLAS is used only where its kernel is tuned for the core") {
  // An AVX2 core: OpenBLAS's Haswell and Zen kernels (and the AVX-512 ones, should it pick one).
  CHECK(cpu::blas_kernel_is_tuned("Haswell", true, false));
  CHECK(cpu::blas_kernel_is_tuned("Zen", true, false));
  CHECK(cpu::blas_kernel_is_tuned("SkylakeX", true, false));
  // Its fallbacks for a core it does not know.
  CHECK_FALSE(cpu::blas_kernel_is_tuned("Prescott", true, false));
  CHECK_FALSE(cpu::blas_kernel_is_tuned("Sandybridge", true, false));
  CHECK_FALSE(cpu::blas_kernel_is_tuned("", true, false));
  // An AVX-512 core: only an AVX-512 kernel; AVX2 code would leave half of each vector unit idle.
  CHECK(cpu::blas_kernel_is_tuned("SkylakeX", true, true));
  CHECK(cpu::blas_kernel_is_tuned("SapphireRapids", true, true));
  CHECK(cpu::blas_kernel_is_tuned("Cooperlake", true, true));
  CHECK_FALSE(cpu::blas_kernel_is_tuned("Haswell", true, true));
  CHECK_FALSE(cpu::blas_kernel_is_tuned("Prescott", true, true));
  // A core without AVX2: OpenBLAS's own kernel for it.
  CHECK(cpu::blas_kernel_is_tuned("Sandybridge", false, false));

  // This process's choice follows the rule, and set_gemm_kernel(kAuto) restores it.
  const GemmKernel automatic = cpu::gemm_kernel();
  CHECK(automatic != GemmKernel::kAuto);
  {
    KernelScope scope(GemmKernel::kEigen);
    CHECK(cpu::gemm_kernel() == GemmKernel::kEigen);
  }
  CHECK(cpu::gemm_kernel() == automatic);
  const std::string description = cpu::gemm_kernel_description();
  CHECK(description.rfind(automatic == GemmKernel::kOpenBlas ? "OpenBLAS sgemm" : "Eigen", 0) == 0);
  if (!have_openblas())
    CHECK_THROWS_AS(cpu::set_gemm_kernel(GemmKernel::kOpenBlas), std::invalid_argument);
}
