#pragma once
// Groups of runs: runs that share a model shape train together as one Model<B> of K models
// (lab/run/run_group_impl.hpp, the same code for every backend), each with its own seed, data,
// task, reparam, training length and optimizer settings, each written into its own folder. Runs
// that differ only in their test-time attention share one model (training_spec_text). On the CPU
// a group is one training; on the GPU, up to kMaxModelsPerGroup of them. Device::train
// (lab/run/device.hpp) runs a group on its backend.
#include <string>
#include <vector>

#include "lab/run/run_train.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// One run of a group: its settings, resolved once here (UsageError on bad ones), and where its
// folder goes. Change `options` freely; `spec` and `resolved` belong together.
struct GroupJob {
  GroupJob(TrainSpec spec, RunOptions options);                         // resolves spec
  GroupJob(TrainSpec spec, ResolvedSpec resolved, RunOptions options);  // resolved already
  TrainSpec spec;
  ResolvedSpec resolved;  // resolve(spec)
  RunOptions options;
};

// Runs with equal keys can train together: same model shape and positional encoding (and learned
// table size), steps and batch size. Everything else may differ.
std::string gpu_group_key(const TrainSpec& spec);
std::string gpu_group_key(const GroupJob& job);  // the same, from the job's resolved model

// A GPU group holds at most this many runs (a sweep makes more groups).
inline constexpr int kMaxModelsPerGroup = 128;

}  // namespace lenlab
