#pragma once
// The Slurm job array that trains an experiment's plan on a cluster: one array task per planned
// run, each `lenlab run CONFIG --out DIR --run-index $SLURM_ARRAY_TASK_ID` into the shared folder
// DIR (a task whose run is already finished there exits at once, so resubmitting the script
// trains only what is missing). `lenlab plot DIR` draws the figures once all are done.
#include <map>
#include <string>
#include <vector>

#include "cost/time_model.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/plan.hpp"

namespace lenlab {

// What each task asks Slurm for, from the largest run's cost estimate (cost/run_cost.hpp) and
// this machine's measured rates for the runs' shapes (`speeds`: cost/dry_run.hpp's cpu_speeds, as
// --dry-run predicts).
struct SlurmLimits {
  std::string mem;   // sbatch --mem, e.g. "1G": 1.5x the estimated peak memory, at least 1G
  std::string time;  // sbatch --time, D-HH:MM:SS: 3x the predicted time here, at least 10 minutes
  int cpus = 1;      // --cpus-per-task: the most threads a run trains with
};
SlurmLimits slurm_limits(const std::vector<PlannedRun>& runs,
                         const std::map<SpeedShape, CpuSpeed>& speeds);

// The sbatch script for `runs` (the whole plan, in plan order: task i trains runs[i]) of the
// experiment `o` describes (o.out, o.figures, o.n_seeds, o.device, o.lenlab_path), asking for
// `limits`; its tasks log to `log_dir`/run-<task>.log.
std::string slurm_script(const ExperimentOptions& o, const std::vector<PlannedRun>& runs,
                         const SlurmLimits& limits, const std::filesystem::path& log_dir);

}  // namespace lenlab
