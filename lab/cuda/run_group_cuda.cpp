// Groups of runs on the GPU: one Model<CudaBackend> of K models (lab/gpu_runs.hpp).
#include "core/error.hpp"
#include "lab/device.hpp"
#include "lab/gpu_runs.hpp"
#include "lab/run_group_impl.hpp"
#include "models/cuda/backend.hpp"

namespace lenlab {

std::vector<int> run_train_gpu_group(const std::vector<GroupJob>& jobs) {
  const ResolvedDevice device = resolve_device(DeviceChoice::kCuda);
  return run_group_on<CudaBackend>(jobs, device.label);
}

}  // namespace lenlab
