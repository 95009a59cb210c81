#pragma once
// Error checks for the CUDA backend: every runtime-API call, every kernel launch and every cuBLAS
// call goes through one of these, so a failure names the call (or kernel) and where it was made.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace lenlab::cuda {

// A CUDA or cuBLAS failure: no device, out of memory, a bad launch. Not a UsageError: the input
// was fine, the machine was not.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError "<what> failed at <file>:<line>: <cudaGetErrorString>" unless status is success.
void check_cuda(cudaError_t status, const char* what, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* what, const char* file, int line);
// After a launch: reports a bad configuration at once (cudaGetLastError), and when the environment
// variable LENLAB_CUDA_SYNC=1 is set also waits for the kernel, so that a fault inside it is
// reported with its name instead of at the next synchronising call.
void check_launch(const char* kernel, const char* file, int line);

}  // namespace lenlab::cuda

#define LENLAB_CUDA_CHECK(call) ::lenlab::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define LENLAB_CUBLAS_CHECK(call) ::lenlab::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define LENLAB_CHECK_LAUNCH(kernel) ::lenlab::cuda::check_launch(kernel, __FILE__, __LINE__)
