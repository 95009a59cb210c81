// lab/run/cuda/device_cuda.hpp: the work of lab/run, instantiated for the GPU.
#include "lab/run/cuda/device_cuda.hpp"

#include "lab/run/evaluate_parameters.hpp"
#include "lab/run/group_speed.hpp"
#include "lab/run/run_group_impl.hpp"
#include "models/cuda/backend.hpp"
#include "models/cuda/device.hpp"

namespace lenlab::cuda_work {

bool gpu_available(std::string& label, std::string& reason) {
  const cuda::DeviceInfo& gpu = cuda::device_info();
  if (gpu.available) label = gpu.label();
  reason = gpu.reason;
  return gpu.available;
}

std::vector<int> train(const std::vector<GroupJob>& jobs, const std::string& label) {
  return run_group_on<CudaBackend>(jobs, label);
}

GroupSpeed measure_group_speed(const SpeedShape& shape) {
  return lenlab::measure_group_speed<CudaBackend>(shape, kGroupSpeedModels);
}

std::vector<LengthResult> evaluate(const ModelConfig& model, const std::vector<double>& params,
                                   const EvalJob& job,
                                   const std::function<void(int, int)>& on_length) {
  return evaluate_parameters_on<CudaBackend>(model, params, job, on_length);
}

std::vector<int> generate(const ModelConfig& model, const std::vector<double>& params,
                          const GenerateJob& job, const std::function<void(int)>& on_token) {
  return generate_parameters_on<CudaBackend>(model, params, job, on_token);
}

void stream(const ModelConfig& model, const std::vector<double>& params, const StreamJob& job,
            const std::function<void(const StreamChunk&)>& on_chunk) {
  stream_parameters_on<CudaBackend>(model, params, job, on_chunk);
}

}  // namespace lenlab::cuda_work
