#pragma once
// The GPU half of lab/run/device.hpp, compiled in CUDA builds only: the same work on
// Model<CudaBackend>. Nothing here needs the CUDA headers, so device.cpp may include it in every
// build and call it only when the build has the backend.
#include <functional>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

struct GroupJob;     // lab/run/run_group.hpp
struct GroupSpeed;   // cost/group_time_model.hpp
struct SpeedShape;   // cost/time_model.hpp
struct GenerateJob;  // train/generate.hpp
struct StreamJob;    // train/stream_eval.hpp
struct StreamChunk;

namespace cuda_work {

// Whether a GPU is present; else why not (e.g. "no CUDA device was found").
bool gpu_available(std::string& label, std::string& reason);
std::vector<int> train(const std::vector<GroupJob>& jobs, const std::string& label);
// lab/run/group_speed.hpp on the GPU, with groups of kGroupSpeedModels in its larger probes.
GroupSpeed measure_group_speed(const SpeedShape& shape);
inline constexpr int kGroupSpeedModels = 32;
std::vector<LengthResult> evaluate(const ModelConfig& model, const std::vector<double>& params,
                                   const EvalJob& job,
                                   const std::function<void(int, int)>& on_length);
std::vector<int> generate(const ModelConfig& model, const std::vector<double>& params,
                          const GenerateJob& job, const std::function<void(int)>& on_token);
void stream(const ModelConfig& model, const std::vector<double>& params, const StreamJob& job,
            const std::function<void(const StreamChunk&)>& on_chunk);

}  // namespace cuda_work
}  // namespace lenlab
