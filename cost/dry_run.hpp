#pragma once
// `lenlab reproduce --dry-run` and `lenlab run CONFIG --dry-run`: what a sweep would train and how
// long it would take on this machine, without training anything or writing a file. The time comes
// from cost/time_model.hpp: each run's work over the rates lenlab reaches on this core for its
// model's shape (measured on the spot), the runs handed to `jobs` workers in the order the sweep
// hands them out.
#include <map>
#include <string>
#include <vector>

#include "cost/budget.hpp"
#include "cost/group_time_model.hpp"
#include "cost/time_model.hpp"

namespace lenlab {

struct DryRunInput {
  std::string config_source;    // for the first line
  size_t n_planned = 0;         // runs in the plan
  std::vector<CostedRun> todo;  // the ones not finished in --out yet, in sweep order
  int jobs = 1;
  int cores = 1;                          // the machine's: more jobs than cores share them
  bool gpu = false;                       // the sweep would train on a GPU
  std::map<SpeedShape, CpuSpeed> speeds;  // this core's, for each shape in todo (CPU sweeps)
  // This core's 512×512 sgemm FLOP/s (measure_sgemm_peak), for the FLOP floor; 0: none printed.
  double sgemm_peak = 0;
  double peak_bytes = 0;  // the sweep's memory estimate (cost/budget.hpp)
  // GPU sweeps: the groups the sweep would train (indices into todo, in the order it starts them:
  // lab/run/run_group.hpp's gpu_groups) and the GPU's rates for each model shape among them,
  // measured on it (Device::measure_group_speed); without rates, the rough time of
  // cost/run_cost.hpp's constants.
  std::vector<std::vector<size_t>> groups;
  std::map<SpeedShape, GroupSpeed> group_speeds;
  std::string device_label;  // "cuda:0 (NVIDIA H100 ...)"
};

// The report: one line per kind of run (the settings that drive cost), with its count and its
// predicted training and evaluation time (on a GPU with measured rates, per kind of group:
// cost/group_time_model.hpp), then the predicted wall time of the whole sweep and,
// with sgemm_peak, its FLOP floor: the work counted (cost/run_cost.hpp; shared training once) over
// min(jobs, cores) cores at that peak, the least time a CPU sweep could take, and the prediction's
// multiple of it.
std::string dry_run_report(const DryRunInput& in);

// The rates of every model shape among `runs` on this core: `fixed` for each when it is set
// (train_flops > 0), else measured (cost/time_model.hpp, about 0.8 s a shape).
// The specs of costed runs, in order.
std::vector<TrainSpec> specs_of(const std::vector<CostedRun>& runs);
std::map<SpeedShape, CpuSpeed> cpu_speeds(const std::vector<TrainSpec>& runs,
                                          const CpuSpeed& fixed = {});

// A CPU sweep's predicted times: per run (in `runs`' order) its training, 0 where another run's
// training serves it (runs that differ only in test-time attention train once), and its
// evaluation; and the wall time of it all on `jobs` workers (more jobs than `cores` share them).
struct SweepTimes {
  std::vector<double> train_s, eval_s;
  std::vector<bool> training_shared;
  double wall = 0;
};
SweepTimes predict_sweep(const std::vector<CostedRun>& runs,
                         const std::map<SpeedShape, CpuSpeed>& speeds, int jobs, int cores);

// Long CPU work's line before it starts: `rough` (cost/budget.hpp's estimate at a fixed rate, up to
// 2× off) with its time predicted instead from this core's rates for `runs` on `jobs` workers.
WorkEstimate with_measured_time(WorkEstimate rough, const std::vector<CostedRun>& runs, int jobs,
                                int cores, const CpuSpeed& fixed = {});

// Wall time of runs taking `seconds` each when `workers` workers take the next run as each
// finishes (the sweep's order: runs[0] first).
double list_schedule_seconds(const std::vector<double>& seconds, int workers);

}  // namespace lenlab
