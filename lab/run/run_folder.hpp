#pragma once
// Writing one run's folder (see lab/run/run_train.hpp for what it holds), whichever device trained
// the run: the manifest with status "running" when the run starts, then loss.csv, results.csv,
// model.safetensors and the final manifest ("completed" or "diverged"), each file atomically; and
// where asked, the initial weights and the batch log, which may lie outside the folder.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lab/run/run_train.hpp"
#include "train/batch_log.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"

namespace lenlab {

class RunFolder {
 public:
  // Checks `options.out` (UsageError if it holds a run and overwrite is off, or is not writable)
  // and the paths of --save-init and --save-batches (writable, not the run's own files), removes a
  // replaced run's files and writes the "running" manifest. `device` is recorded as is, e.g. "cpu"
  // or "cuda:0 (NVIDIA H100 80GB HBM3)".
  RunFolder(const TrainSpec& spec, const ResolvedSpec& resolved, const RunOptions& options,
            const std::string& device, size_t n_parameters);

  // Extra manifest entries (e.g. how many models shared the GPU), written with the next manifest.
  nlohmann::ordered_json& manifest() { return manifest_; }

  // --save-init: the weights before the first step, in the run's precision (nothing without it).
  template <class T>
  void write_init(const std::vector<T>& params) const;
  // --save-batches: the log training appends each step's batch to; null without it. Committed by
  // write_diverged and write_completed.
  BatchLog* batch_log() { return batch_log_.get(); }

  // Training stopped on a non-finite loss or gradient: loss.csv and the "diverged" manifest.
  void write_diverged(const TrainOutcome& outcome);
  // A finished run: loss.csv, results.csv, model.safetensors, the "completed" manifest, and the
  // summary line on options.log.
  void write_completed(const TrainOutcome& outcome, const std::vector<LengthResult>& results,
                       double eval_seconds, const std::vector<double>& params);

 private:
  double wall_seconds() const;
  TrainSpec spec_;
  ModelConfig model_;
  RunOptions options_;
  nlohmann::ordered_json manifest_;
  double start_ = 0;  // steady clock, seconds
  std::unique_ptr<BatchLog> batch_log_;
};

}  // namespace lenlab
