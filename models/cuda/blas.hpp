#pragma once
// The cuBLAS handle of the calling thread (created on first use, checked, on the default stream).
#include <cublas_v2.h>

namespace lenlab::cuda {

cublasHandle_t blas_handle();

}  // namespace lenlab::cuda
