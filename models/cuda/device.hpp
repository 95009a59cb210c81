#pragma once
// Whether a CUDA device can be used, and which one (device 0).
#include <string>

namespace lenlab::cuda {

struct DeviceInfo {
  bool available = false;
  std::string name;    // e.g. "NVIDIA H100 80GB HBM3"
  std::string reason;  // why not, when unavailable (e.g. "no CUDA driver: ...")
  int multiprocessors = 0;
  double memory_gib = 0;
  // "cuda:0 (NVIDIA H100 80GB HBM3)" as manifests record it
  std::string label() const { return "cuda:0 (" + name + ")"; }
};

// Asks the runtime once and remembers the answer; never throws. When a device is present it also
// loads cuBLAS (blas.hpp), and reports the GPU unusable, naming the library, if that fails. Nothing
// else loads CUDA libraries or asks the driver; `--device cpu` never calls it.
const DeviceInfo& device_info();

}  // namespace lenlab::cuda
