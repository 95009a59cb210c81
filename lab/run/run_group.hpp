#pragma once
// Groups of runs: runs that share a model shape train together as one Model<B> of K models
// (lab/run/run_group_impl.hpp, the same code for every backend), each with its own seed, data,
// task, reparam, training length and optimizer settings, each written into its own folder. Runs
// that differ only in their test-time attention share one model (training_spec_text). On the CPU
// a group is one training; on the GPU, up to kMaxModelsPerGroup of them. Device::train
// (lab/run/device.hpp) runs a group on its backend.
#include <algorithm>
#include <map>
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

// The GPU sweep's groups of `items` (lab/experiment/sweep.cpp; the GPU's dry run predicts the
// same groups): items with equal key_of(item) (gpu_group_key, or more) in groups of at most
// kMaxModelsPerGroup, in the order their first items come, then the largest groups first (with
// several groups at a time, the longest work starts at once; the order is otherwise kept).
template <class Item, class KeyOf>
std::vector<std::vector<Item>> gpu_groups(const std::vector<Item>& items, KeyOf key_of) {
  std::vector<std::vector<Item>> groups;
  std::map<std::string, size_t> open;  // each key's group that still has room
  for (const Item& item : items) {
    const std::string key = key_of(item);
    auto it = open.find(key);
    if (it == open.end() || groups[it->second].size() >= kMaxModelsPerGroup) {
      it = open.insert_or_assign(key, groups.size()).first;
      groups.emplace_back();
    }
    groups[it->second].push_back(item);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return groups;
}

}  // namespace lenlab
