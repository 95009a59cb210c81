#include "lab/device.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

#if LENLAB_WITH_CUDA
#include "models/cuda/device.hpp"
#endif

namespace lenlab {

std::vector<std::string> device_names() {
  return {"auto", "cpu", "cuda"};
}

DeviceChoice parse_device(const std::string& name) {
  if (name == "auto") return DeviceChoice::kAuto;
  if (name == "cpu") return DeviceChoice::kCpu;
  if (name == "cuda") return DeviceChoice::kCuda;
  throw UsageError(
      fmt::format("unknown --device '{}'; choose one of {}", name, join_choices(device_names())));
}

bool built_with_cuda() {
#if LENLAB_WITH_CUDA
  return true;
#else
  return false;
#endif
}

ResolvedDevice resolve_device(DeviceChoice choice) {
  const ResolvedDevice cpu{false, "cpu"};
  if (choice == DeviceChoice::kCpu) return cpu;
#if LENLAB_WITH_CUDA
  const cuda::DeviceInfo& gpu = cuda::device_info();
  if (gpu.available) return {true, gpu.label()};
  if (choice == DeviceChoice::kCuda)
    throw UsageError(fmt::format("--device cuda: {}; use --device cpu (or auto)", gpu.reason));
  return cpu;
#else
  if (choice == DeviceChoice::kCuda)
    throw UsageError(
        "--device cuda: this lenlab was built without the CUDA backend (no nvcc was found when it "
        "was configured); rebuild with the CUDA toolkit installed, or use --device cpu (or auto)");
  return cpu;
#endif
}

ResolvedDevice resolve_device(const std::string& name) {
  return resolve_device(parse_device(name));
}

ResolvedDevice resolve_device(const std::string& name, bool float64) {
  const DeviceChoice choice = parse_device(name);
  if (!float64) return resolve_device(choice);
  if (choice == DeviceChoice::kCuda)
    throw UsageError(
        "--device cuda: the CUDA backend computes in float32; --precision float64 runs on the "
        "CPU: use --device cpu (or auto)");
  return resolve_device(DeviceChoice::kCpu);
}

}  // namespace lenlab
