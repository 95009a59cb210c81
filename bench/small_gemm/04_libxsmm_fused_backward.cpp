// Experiment 04: experiment 03's kernels with the backward fused: one pass over dY in blocks of
// rows, each block giving its rows of dX and adding its share to dW while it is still in cache
// (dW then sums over the blocks in order: a different float rounding from 03's one kernel).
// dX and dW columns show half the fused pass each.
//   usage: 04_libxsmm_fused_backward [row block (default 64)]
#include <libxsmm.h>

#include <cstdlib>

#include "bench/small_gemm/common.hpp"
#include "bench/small_gemm/libxsmm_kernels.hpp"

using namespace small_gemm;

namespace {

int kRowBlock = 64;

std::vector<float> wt;

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) kRowBlock = std::max(1, std::atoi(argv[1]));
  libxsmm_init();
  const int rc = run({fmt::format("04 libxsmm, backward fused over row blocks of {}", kRowBlock),
                      [](float* y, const float* x, const float* w, int N, int C, int OC) {
                        for (int r = 0; r < N; r += kRowBlock) {
                          const int n = std::min(kRowBlock, N - r);
                          xsmm_kernel(OC, n, C, OC, C, OC, 0.f, LIBXSMM_GEMM_FLAG_BETA_0)(
                              w, x + size_t(r) * C, y + size_t(r) * OC);
                        }
                      },
                      {},
                      {},
                      [](float* dx, float* dw, const float* x, const float* dy, const float* w,
                         int N, int C, int OC) {
                        wt.resize(size_t(C) * OC);  // W [C, OC] → Wᵀ [OC, C] = C×OC column-major
                        for (int r = 0; r < C; ++r)
                          for (int c = 0; c < OC; ++c)
                            wt[size_t(c) * C + r] = w[size_t(r) * OC + c];
                        for (int r = 0; r < N; r += kRowBlock) {
                          const int n = std::min(kRowBlock, N - r);
                          xsmm_kernel(C, n, OC, C, OC, C, 1.f, 0)(wt.data(), dy + size_t(r) * OC,
                                                                  dx + size_t(r) * C);
                          xsmm_kernel(OC, C, n, OC, C, OC, 1.f, LIBXSMM_GEMM_FLAG_TRANS_B)(
                              dy + size_t(r) * OC, x + size_t(r) * C, dw);
                        }
                      }});
  libxsmm_finalize();
  return rc;
}
