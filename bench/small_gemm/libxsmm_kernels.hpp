#pragma once
// libxsmm's JIT kernels for experiments 03 and 04, made once per (shape, leading dimensions, beta,
// flags) and kept. alpha = 1, no prefetch. Null where libxsmm cannot make one.
#include <libxsmm.h>

#include <map>
#include <tuple>

namespace small_gemm {

inline libxsmm_smmfunction xsmm_kernel(int m, int n, int k, int lda, int ldb, int ldc, float beta,
                                       int flags) {
  static std::map<std::tuple<int, int, int, int, int, int, float, int>, libxsmm_smmfunction> made;
  const auto key = std::make_tuple(m, n, k, lda, ldb, ldc, beta, flags);
  if (auto it = made.find(key); it != made.end()) return it->second;
  const float alpha = 1;
  const int prefetch = LIBXSMM_PREFETCH_NONE;
  return made[key] =
             libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
}

}  // namespace small_gemm
