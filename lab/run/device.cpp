#include "lab/run/device.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <Eigen/Core>

#include "core/error.hpp"
#include "lab/run/cuda/device_cuda.hpp"
#include "lab/run/evaluate_parameters.hpp"
#include "lab/run/group_speed.hpp"
#include "lab/run/run_group_impl.hpp"
#include "models/cpu/backend.hpp"
#include "models/cpu/blas_gemm.hpp"

namespace lenlab {

namespace {

// This thread's OpenMP team (attention) and Eigen's process-wide thread count. Eigen's is only
// written when it changes, so that runs side by side in a sweep (which sets it once, before
// starting them) never write it concurrently.
void use_cpu_threads(int threads) {
  omp_set_num_threads(threads);
  if (Eigen::nbThreads() != threads) Eigen::setNbThreads(threads);
}

}  // namespace

std::vector<std::string> device_names() {
  return {"auto", "cpu", "cuda"};
}

bool built_with_cuda() {
#if LENLAB_WITH_CUDA
  return true;
#else
  return false;
#endif
}

Device Device::choose(const std::string& name, bool float64) {
  if (name != "auto" && name != "cpu" && name != "cuda")
    throw UsageError(
        fmt::format("unknown --device '{}'; choose one of {}", name, join_choices(device_names())));
  // The CPU's kernel for the float products too (LENLAB_GEMM, models/cpu/blas_gemm.hpp): a bad
  // choice is refused here, before any work, even where the GPU then trains (its evaluation of a
  // float64 run, or a fallback, would run on the CPU).
  cpu::gemm_kernel();
  Device cpu;
  if (name == "cpu") return cpu;
  if (float64) {
    if (name == "cuda")
      throw UsageError(
          "--device cuda: the CUDA backend computes in float32; --precision float64 runs on the "
          "CPU: use --device cpu (or auto)");
    return cpu;
  }
#if LENLAB_WITH_CUDA
  Device gpu;
  std::string reason;
  if (cuda_work::gpu_available(gpu.label_, reason)) {
    gpu.gpu_ = true;
    return gpu;
  }
  if (name == "cuda")
    throw UsageError(fmt::format("--device cuda: {}; use --device cpu (or auto)", reason));
#else
  if (name == "cuda")
    throw UsageError(
        "--device cuda: this lenlab was built without the CUDA backend (no nvcc was found when it "
        "was configured); rebuild with the CUDA toolkit installed, or use --device cpu (or auto)");
#endif
  return cpu;
}

std::vector<int> Device::train(const std::vector<GroupJob>& jobs) const {
#if LENLAB_WITH_CUDA
  if (gpu_) return cuda_work::train(jobs, label_);
#endif
  use_cpu_threads(jobs.at(0).spec.threads);
  if (jobs.at(0).spec.precision == "float64") return run_group_on<CpuBackend<double>>(jobs, "cpu");
  return run_group_on<CpuBackend<float>>(jobs, "cpu");
}

GroupSpeed Device::measure_group_speed(const SpeedShape& shape) const {
#if LENLAB_WITH_CUDA
  if (gpu_) return cuda_work::measure_group_speed(shape);
#endif
  return lenlab::measure_group_speed<CpuBackend<float>>(shape, 2);  // at the threads set now
}

std::vector<LengthResult> Device::evaluate(const ModelConfig& model,
                                           const std::vector<double>& params, const EvalJob& job,
                                           int threads, bool float64,
                                           const std::function<void(int, int)>& on_length) const {
#if LENLAB_WITH_CUDA
  if (gpu_) return cuda_work::evaluate(model, params, job, on_length);
#endif
  use_cpu_threads(threads);
  if (float64) return evaluate_parameters_on<CpuBackend<double>>(model, params, job, on_length);
  return evaluate_parameters_on<CpuBackend<float>>(model, params, job, on_length);
}

std::vector<int> Device::generate(const ModelConfig& model, const std::vector<double>& params,
                                  const GenerateJob& job, int threads, bool float64,
                                  const std::function<void(int)>& on_token) const {
#if LENLAB_WITH_CUDA
  if (gpu_) return cuda_work::generate(model, params, job, on_token);
#endif
  use_cpu_threads(threads);
  if (float64) return generate_parameters_on<CpuBackend<double>>(model, params, job, on_token);
  return generate_parameters_on<CpuBackend<float>>(model, params, job, on_token);
}

void Device::stream(const ModelConfig& model, const std::vector<double>& params,
                    const StreamJob& job, int threads, bool float64,
                    const std::function<void(const StreamChunk&)>& on_chunk) const {
#if LENLAB_WITH_CUDA
  if (gpu_) return cuda_work::stream(model, params, job, on_chunk);
#endif
  use_cpu_threads(threads);
  if (float64) return stream_parameters_on<CpuBackend<double>>(model, params, job, on_chunk);
  stream_parameters_on<CpuBackend<float>>(model, params, job, on_chunk);
}

}  // namespace lenlab
