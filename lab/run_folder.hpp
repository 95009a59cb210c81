#pragma once
// Writing one run's folder (see lab/run_train.hpp for what it holds), whichever device trained the
// run: the manifest with status "running" when the run starts, then loss.csv, results.csv,
// model.safetensors and the final manifest ("completed" or "diverged"), each file atomically.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lab/run_train.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"

namespace lenlab {

class RunFolder {
 public:
  // Checks `options.out` (UsageError if it holds a run and overwrite is off, or is not writable),
  // removes a replaced run's files and writes the "running" manifest. `device` is recorded as is,
  // e.g. "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)".
  RunFolder(const TrainSpec& spec, const ResolvedSpec& resolved, const RunOptions& options,
            const std::string& device, size_t n_parameters);

  // Extra manifest entries (e.g. how many models shared the GPU), written with the next manifest.
  nlohmann::ordered_json& manifest() { return manifest_; }

  // Training stopped on a non-finite loss or gradient: loss.csv and the "diverged" manifest.
  void write_diverged(const TrainOutcome& outcome);
  // A finished run: loss.csv, results.csv, model.safetensors, the "completed" manifest, and the
  // summary line on options.log.
  void write_completed(const TrainOutcome& outcome, const std::vector<LengthResult>& results,
                       double eval_seconds, const std::vector<float>& params);

 private:
  double wall_seconds() const;
  TrainSpec spec_;
  ModelConfig model_;
  RunOptions options_;
  nlohmann::ordered_json manifest_;
  double start_ = 0;  // steady clock, seconds
};

}  // namespace lenlab
