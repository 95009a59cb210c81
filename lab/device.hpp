#pragma once
// Which backend trains a run: `--device auto|cpu|cuda`. The device is not a setting of the run
// (two devices give the same results up to float rounding), so it is recorded in the manifest but
// not in the run's config, its id or the check that a resumed sweep found the same run.
#include <string>
#include <vector>

namespace lenlab {

enum class DeviceChoice { kAuto, kCpu, kCuda };

DeviceChoice parse_device(const std::string& name);  // UsageError naming the choices
std::vector<std::string> device_names();             // "auto", "cpu", "cuda"

struct ResolvedDevice {
  bool cuda = false;
  std::string label;  // "cpu", or "cuda:0 (<GPU name>)"
};

// auto: the GPU when this build has the CUDA backend and a device is present, else the CPU.
// cuda: a UsageError saying why when that is impossible (built without CUDA, no device).
ResolvedDevice resolve_device(DeviceChoice choice);
ResolvedDevice resolve_device(const std::string& name);
// For work in float64 (--precision; the CUDA backend computes in float32 only): auto is the CPU,
// cuda a UsageError saying why. float64 false: resolve_device(name).
ResolvedDevice resolve_device(const std::string& name, bool float64);

// Whether this program was built with the CUDA backend.
bool built_with_cuda();

}  // namespace lenlab
