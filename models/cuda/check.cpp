#include "models/cuda/check.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "models/cuda/blas.hpp"

namespace lenlab::cuda {

void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(fmt::format("CUDA: {} failed at {}:{}: {} ({})", what, file, line,
                              cudaGetErrorString(status), cudaGetErrorName(status)));
}

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  // cuBLAS is loaded at run time (blas.hpp); a status can only come from a loaded library, but a
  // failure report must not depend on that.
  const Cublas* lib = loaded_cublas();
  const std::string text = lib ? lib->get_status_string(status) : "cuBLAS error";
  const std::string name =
      lib ? lib->get_status_name(status) : fmt::format("status {}", static_cast<int>(status));
  throw CudaError(fmt::format("cuBLAS: {} failed at {}:{}: {} ({})", what, file, line, text, name));
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
