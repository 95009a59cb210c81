// Experiment 03: libxsmm's JIT-generated small-matrix kernels (Debian's libxsmm-dev 1.17). libxsmm
// is column-major: a row-major [rows, cols] buffer is its column-major [cols, rows] transpose, so
//   forward  Yᵀ (OC×N)  = Wᵀ (OC×C) · Xᵀ (C×N)      no transpose
//   dX       dXᵀ (C×N) += W  (C×OC) · dYᵀ (OC×N)    W needs a transpose (TRANS_A, or a copy)
//   dW       dWᵀ (OC×C) += dYᵀ (OC×N) · X (N×C)     X needs a transpose (TRANS_B, or a copy)
// Kernels are made once per shape and kept. The rows are cut into blocks (argument 1, default 64;
// 0 = all rows in one kernel) so each kernel stays small, libxsmm's home ground; dW, whose k is
// the rows, runs as one kernel.
//   usage: 03_libxsmm [row block]
#include <libxsmm.h>

#include <cstdlib>

#include "bench/small_gemm/common.hpp"
#include "bench/small_gemm/libxsmm_kernels.hpp"

using namespace small_gemm;

namespace {

int kRowBlock = 64;

// Row-major transpose of src [rows, cols] into dst [cols, rows].
void transpose(float* dst, const float* src, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[size_t(c) * rows + r] = src[size_t(r) * cols + c];
}

std::vector<float> scratch;

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) kRowBlock = std::atoi(argv[1]);
  if (kRowBlock <= 0) kRowBlock = 1 << 30;
  libxsmm_init();
  const int trans_a =
      xsmm_kernel(64, 64, 64, 64, 64, 64, 1.f, LIBXSMM_GEMM_FLAG_TRANS_A) != nullptr;
  const int trans_b =
      xsmm_kernel(64, 64, 64, 64, 64, 64, 1.f, LIBXSMM_GEMM_FLAG_TRANS_B) != nullptr;
  fmt::print("libxsmm {}: JIT kernels with TRANS_A {}, TRANS_B {} (else a transposed copy)\n",
             LIBXSMM_VERSION, trans_a ? "yes" : "no", trans_b ? "yes" : "no");
  const int rc =
      run({fmt::format("03 libxsmm JIT kernels, rows in blocks of {}", kRowBlock),
           [](float* y, const float* x, const float* w, int N, int C, int OC) {
             for (int r = 0; r < N; r += kRowBlock) {
               const int n = std::min(kRowBlock, N - r);
               xsmm_kernel(OC, n, C, OC, C, OC, 0.f, LIBXSMM_GEMM_FLAG_BETA_0)(w, x + size_t(r) * C,
                                                                               y + size_t(r) * OC);
             }
           },
           [trans_a](float* dx, const float* dy, const float* w, int N, int C, int OC) {
             const float* a = w;
             int flags = LIBXSMM_GEMM_FLAG_TRANS_A, lda = OC;
             if (!trans_a) {
               scratch.resize(size_t(C) * OC);
               transpose(scratch.data(), w, C, OC);  // [OC, C] row-major = C×OC column-major
               a = scratch.data();
               flags = LIBXSMM_GEMM_FLAG_NONE;
               lda = C;
             }
             for (int r = 0; r < N; r += kRowBlock) {
               const int n = std::min(kRowBlock, N - r);
               xsmm_kernel(C, n, OC, lda, OC, C, 1.f, flags)(a, dy + size_t(r) * OC,
                                                             dx + size_t(r) * C);
             }
           },
           [trans_b](float* dw, const float* x, const float* dy, int N, int C, int OC) {
             const float* b = x;
             int flags = LIBXSMM_GEMM_FLAG_TRANS_B, ldb = C;
             if (!trans_b) {
               scratch.resize(size_t(N) * C);
               transpose(scratch.data(), x, N, C);  // [C, N] row-major = N×C column-major
               b = scratch.data();
               flags = LIBXSMM_GEMM_FLAG_NONE;
               ldb = N;
             }
             xsmm_kernel(OC, C, N, OC, ldb, OC, 1.f, flags)(dy, b, dw);
           }});
  libxsmm_finalize();
  return rc;
}
