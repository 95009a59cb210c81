#pragma once
// Groups of runs: runs that share a model shape train together as one Model<B> of K models
// (lab/run_group_impl.hpp, the same code for every backend), each with its own seed, data, task,
// reparam, training length and optimizer settings, each written into its own folder. Runs that
// differ only in their test-time attention share one model (training_spec_text). On the CPU a
// group is one training (run_train_cpu_group); on the GPU, run_train_gpu_group (CUDA builds only).
#include <string>
#include <vector>

#include "lab/run_train.hpp"

namespace lenlab {

struct GroupJob {  // one run of a group
  TrainSpec spec;
  RunOptions options;
};

// Runs with equal keys can train together: same model shape and positional encoding (and learned
// table size), steps and batch size. Everything else may differ.
std::string gpu_group_key(const TrainSpec& spec);

// Trains and evaluates the jobs together and writes each one's folder; returns each job's exit
// code (kExitOk or kExitDiverged, in job order). A manifest records the device and how many
// models trained together; its train_seconds and eval_seconds are the whole group's.
// Throws UsageError (before writing anything) on a bad spec or jobs with different keys, and
// cuda::CudaError when the GPU fails (the folders then hold "running" manifests, which a resumed
// sweep retrains).
std::vector<int> run_train_gpu_group(const std::vector<GroupJob>& jobs);
// The same on the CPU, for jobs that share one training (equal training_spec_text), with the
// first job's thread count (lab/run_train.cpp).
std::vector<int> run_train_cpu_group(const std::vector<GroupJob>& jobs);

}  // namespace lenlab
