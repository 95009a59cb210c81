#include "models/cuda/device.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <string>

#include "models/cuda/blas.hpp"

namespace lenlab::cuda {

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      d.reason = fmt::format("no usable CUDA device: {} ({})", cudaGetErrorString(status),
                             cudaGetErrorName(status));
      return d;
    }
    if (count == 0) {
      d.reason = "no CUDA device found (cudaGetDeviceCount returned 0)";
      return d;
    }
    cudaDeviceProp prop{};
    const cudaError_t props = cudaGetDeviceProperties(&prop, 0);
    if (props != cudaSuccess) {
      d.reason = fmt::format("cannot read CUDA device 0: {}", cudaGetErrorString(props));
      return d;
    }
    d.name = prop.name;
    // Only now, with a device present, is cuBLAS worth loading (blas.hpp): a machine without a
    // GPU or driver never pays for it. Without it the GPU cannot train, so it is not usable.
    std::string why;
    if (!load_cublas(&why)) {
      d.reason = fmt::format("CUDA device 0 ({}) found, but {}", d.name, why);
      return d;
    }
    d.available = true;
    d.multiprocessors = prop.multiProcessorCount;
    d.memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    return d;
  }();
  return info;
}

}  // namespace lenlab::cuda
