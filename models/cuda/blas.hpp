#pragma once
// cuBLAS, loaded at run time, and the cuBLAS handle of the calling thread.
//
// The program does not link cuBLAS: loading it (and libcublasLt, which it needs) costs about
// 200 MB and 0.1 s, which every CPU invocation would pay. It is opened with dlopen the first time a
// GPU is looked for (device_info(), after a device was found) or a handle is needed, and the few
// functions lenlab calls are resolved into the table below. cublas_v2.h is included for the types.
#include <cublas_v2.h>

#include <string>

namespace lenlab::cuda {

// The cuBLAS functions lenlab calls, resolved from the loaded library.
struct Cublas {
  decltype(&::cublasCreate) create = nullptr;         // cublasCreate_v2
  decltype(&::cublasSetStream) set_stream = nullptr;  // cublasSetStream_v2
  decltype(&::cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  decltype(&::cublasGetStatusName) get_status_name = nullptr;
  decltype(&::cublasGetStatusString) get_status_string = nullptr;
};

// Opens cuBLAS once per process (thread-safe) and returns its functions, or nullptr when it cannot
// be loaded; `why` then receives one line naming the library and dlerror(). Never throws.
const Cublas* load_cublas(std::string* why = nullptr) noexcept;

// The library if an earlier call loaded it, else nullptr; never loads it.
const Cublas* loaded_cublas() noexcept;

// The loaded library's functions, loading it on first use (CudaError naming the library when that
// is impossible): e.g. cublas().sgemm_strided_batched(blas_handle(), ...).
const Cublas& cublas();

// The calling thread's handle, created on first use (loading cuBLAS, CudaError when impossible),
// checked, and bound to the thread's default stream like every kernel launch.
cublasHandle_t blas_handle();

}  // namespace lenlab::cuda
