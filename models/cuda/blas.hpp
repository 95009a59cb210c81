#pragma once
// The cuBLAS handle of the calling thread: created on first use, checked, and bound to the
// thread's default stream like every kernel launch.
#include <cublas_v2.h>

namespace lenlab::cuda {

cublasHandle_t blas_handle();

}  // namespace lenlab::cuda
