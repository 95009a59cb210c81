#include "models/cuda/check.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace lenlab::cuda {

void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(fmt::format("CUDA: {} failed at {}:{}: {} ({})", what, file, line,
                              cudaGetErrorString(status), cudaGetErrorName(status)));
}

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(fmt::format("cuBLAS: {} failed at {}:{}: {} ({})", what, file, line,
                              cublasGetStatusString(status), cublasGetStatusName(status)));
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t status = cudaGetLastError();
  static const bool sync = [] {
    const char* v = std::getenv("LENLAB_CUDA_SYNC");
    return v && std::strcmp(v, "1") == 0;
  }();
  if (status == cudaSuccess && sync) status = cudaDeviceSynchronize();
  if (status == cudaSuccess) return;
  throw CudaError(fmt::format("CUDA: kernel {} (launched at {}:{}) failed: {} ({})", kernel, file,
                              line, cudaGetErrorString(status), cudaGetErrorName(status)));
}

}  // namespace lenlab::cuda
