#pragma once
// A candidate on any library's CBLAS interface (cblas.h of the library the program is built
// with): the three products as row-major cblas_sgemm calls. Experiments 02 (OpenBLAS) and 05
// (BLIS) differ only in the cblas.h and library they are built with.
#include <cblas.h>

#include <string>

#include "bench/small_gemm/common.hpp"

namespace small_gemm {

inline Candidate cblas_candidate(const std::string& name) {
  return {name,
          [](float* y, const float* x, const float* w, int N, int C, int OC) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, OC, C, 1.f, x, C, w, OC, 0.f,
                        y, OC);
          },
          [](float* dx, const float* dy, const float* w, int N, int C, int OC) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, C, OC, 1.f, dy, OC, w, OC, 1.f,
                        dx, C);
          },
          [](float* dw, const float* x, const float* dy, int N, int C, int OC) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, OC, N, 1.f, x, C, dy, OC, 1.f,
                        dw, OC);
          }};
}

}  // namespace small_gemm
