#pragma once
// Where work runs: `--device auto|cpu|cuda`, chosen once per command (Device::choose), which then
// hands each piece of work the backend it runs on: a group of runs to train and evaluate
// (lab/run/run_group.hpp), or a trained model to evaluate (lenlab eval). The work itself is
// written once, as templates over the backend (models/cpu/backend.hpp); this file and its CUDA half
// (lab/run/cuda/) are the only place that knows which backends this build has.
// The device is not a setting of the run (two devices give the same results up to float
// rounding), so it is recorded in the manifest but not in the run's config, its id or the check
// that a resumed sweep found the same run.
#include <functional>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

struct GenerateJob;  // train/generate.hpp
struct GroupJob;     // lab/run/run_group.hpp
struct GroupSpeed;   // cost/group_time_model.hpp
struct SpeedShape;   // cost/time_model.hpp
struct StreamJob;    // train/stream_eval.hpp
struct StreamChunk;

std::vector<std::string> device_names();  // "auto", "cpu", "cuda"
bool built_with_cuda();                   // whether this program has the CUDA backend

class Device {
 public:
  // The one place that chooses where work runs: the device, and the CPU's kernel for its float
  // products (LENLAB_GEMM; UsageError naming the choices for a bad one).
  // auto: the GPU when this build has the CUDA backend and a device is present, else the CPU.
  // cuda: a UsageError saying why when that is impossible (built without CUDA, no device, or
  // float64 work: the CUDA backend computes in float32, so float64 work runs on the CPU). An
  // unknown name: a UsageError naming the choices.
  static Device choose(const std::string& name, bool float64 = false);

  bool gpu() const { return gpu_; }
  const std::string& label() const { return label_; }  // "cpu", or "cuda:0 (<GPU name>)"

  // Trains and evaluates the jobs together and writes each one's folder; returns each job's exit
  // code (lab/run/run_group.hpp). On the CPU with the first job's threads and precision.
  std::vector<int> train(const std::vector<GroupJob>& jobs) const;

  // The rates cost/group_time_model.hpp predicts a group's time from, for one model shape,
  // measured on this device by training and evaluating small groups of it (lab/run/
  // group_speed.hpp: a few seconds on a GPU; groups of 2 on the CPU, where the dry run predicts
  // from cost/time_model.hpp instead).
  GroupSpeed measure_group_speed(const SpeedShape& shape) const;

  // One model's parameters evaluated (lenlab eval): on the CPU with `threads` threads, in float64
  // when asked (a --precision float64 run).
  std::vector<LengthResult> evaluate(const ModelConfig& model, const std::vector<double>& params,
                                     const EvalJob& job, int threads, bool float64,
                                     const std::function<void(int, int)>& on_length) const;
  // One model's parameters writing after a prompt (lenlab generate), as evaluate() runs.
  std::vector<int> generate(const ModelConfig& model, const std::vector<double>& params,
                            const GenerateJob& job, int threads, bool float64,
                            const std::function<void(int)>& on_token) const;
  // One model's parameters reading a long text through its cache (lenlab eval --stream).
  void stream(const ModelConfig& model, const std::vector<double>& params, const StreamJob& job,
              int threads, bool float64,
              const std::function<void(const StreamChunk&)>& on_chunk) const;

 private:
  bool gpu_ = false;
  std::string label_ = "cpu";
};

}  // namespace lenlab
