#pragma once
// An experiment's plan: the training runs its figures need, each with a stable id, parents before
// their fine-tunes (what a sweep trains, lab/experiment/sweep.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// One training run of an experiment: its settings and a stable id (readable prefix + hash of
// every setting), so the same run shared by two figures is trained once and found again on disk.
struct PlannedRun {
  std::string id;
  TrainSpec spec;
  // Fine-tuning another run of the plan (init_from = "figure:NAME"): that run's id, which the
  // sweep trains first; its folder is the runs folder's <parent>. Empty: none, or a folder given
  // by path (spec.init_from).
  std::string parent;
};

// init_from = "figure:NAME" in a config: fine-tune the run of figure NAME with this run's seed, on
// NAME's line that matches this run (the line whose setting of NAME's `vary` this run shares; a
// figure of one line: that line).
inline constexpr const char* kInitFromFigure = "figure:";

// The runs of the selected figures (all when `figures` is empty) and seeds, without duplicates,
// in a deterministic order, each parent (init_from) before its fine-tunes, whether or not its
// figure is selected. Unknown figure names are a UsageError listing the valid ones, as are a
// parent figure without a matching line and a chain of fine-tunes that loops.
std::vector<PlannedRun> plan_runs(const ExperimentConfig& config,
                                  const std::vector<std::string>& figures,
                                  const std::vector<uint64_t>& seeds);

}  // namespace lenlab
