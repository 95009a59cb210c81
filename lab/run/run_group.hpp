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

namespace lenlab {

struct GroupJob {  // one run of a group
  TrainSpec spec;
  RunOptions options;
};

// Runs with equal keys can train together: same model shape and positional encoding (and learned
// table size), steps and batch size. Everything else may differ.
std::string gpu_group_key(const TrainSpec& spec);

// A GPU group holds at most this many runs (a sweep makes more groups).
inline constexpr int kMaxModelsPerGroup = 128;

}  // namespace lenlab
