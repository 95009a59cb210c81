#include "models/cuda/blas.hpp"

#include "models/cuda/check.hpp"

namespace lenlab::cuda {

cublasHandle_t blas_handle() {
  // One per thread: cuBLAS handles are not meant to be shared by threads issuing work at once.
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    LENLAB_CUBLAS_CHECK(cublasCreate(&h));
    // The thread's own default stream, where its kernels go (CUDA_API_PER_THREAD_DEFAULT_STREAM).
    LENLAB_CUBLAS_CHECK(cublasSetStream(h, cudaStreamPerThread));
    return h;
  }();
  return handle;
}

}  // namespace lenlab::cuda
