#pragma once
// `lenlab reproduce --dry-run` and `lenlab run CONFIG --dry-run`: what a sweep would train and how
// long it would take on this machine, without training anything or writing a file. The time comes
// from train/time_model.hpp: each run's work over the rates lenlab reaches on this core for its
// model's shape (measured on the spot), the runs handed to `jobs` workers in the order the sweep
// hands them out.
#include <map>
#include <string>
#include <vector>

#include "lab/experiment_config.hpp"
#include "train/time_model.hpp"

namespace lenlab {

struct DryRunInput {
  std::string config_source;     // for the first line
  size_t n_planned = 0;          // runs in the plan
  std::vector<PlannedRun> todo;  // the ones not finished in --out yet, in sweep order
  int jobs = 1;
  int cores = 1;                          // the machine's: more jobs than cores share them
  bool gpu = false;                       // the sweep would train on a GPU
  std::map<SpeedShape, CpuSpeed> speeds;  // this core's, for each shape in todo (CPU sweeps)
  double peak_bytes = 0;                  // the sweep's memory estimate (lab/budget.hpp)
};

// The report: one line per kind of run (the settings that drive cost), with its count and its
// predicted training and evaluation time, then the predicted wall time of the whole sweep.
std::string dry_run_report(const DryRunInput& in);

// Wall time of runs taking `seconds` each when `workers` workers take the next run as each
// finishes (the sweep's order: runs[0] first).
double list_schedule_seconds(const std::vector<double>& seconds, int workers);

}  // namespace lenlab
