#pragma once
// `lenlab run --slurm` / `lenlab reproduce --slurm`: the job array of
// lab/experiment/slurm_script.hpp submitted with sbatch and watched until it ends, for users who
// would rather not handle scripts. Its folder OUT/slurm holds the script, each task's log
// (run-<task>.log) and job.json (the job id, so that a watcher interrupted and started again
// watches the same job instead of submitting another).
#include <filesystem>
#include <string>
#include <vector>

#include "lab/experiment/experiment.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/experiment/slurm_script.hpp"

namespace lenlab {

// Slurm's `program` (sbatch, squeue) on PATH, or a UsageError saying that --slurm needs it.
std::filesystem::path find_slurm_program(const std::string& program);

// --slurm's options against each other and the rest (--emit-slurm, --run-index, --sbatch-arg,
// --slurm-poll), and with --slurm, sbatch and squeue on PATH: a UsageError naming the flag.
void check_slurm_options(const ExperimentOptions& o);

// "0-3,5,7-8": sbatch --array's list of the ascending task ids `tasks`.
std::string array_ranges(const std::vector<int>& tasks);

// The array tasks still queued, from `squeue -h -r -o "%K %T"` (one "<task id> <state>" a line).
struct QueuedTask {
  int task = 0;
  std::string state;  // PENDING, RUNNING, ...
};
std::vector<QueuedTask> parse_squeue(const std::string& text);

// What each task asked Slurm for: the script's limits (lab/experiment/slurm_script.hpp), with
// --mem= and --time= among `sbatch_args` in their place (sbatch's options override the script's),
// marked "(from --sbatch-arg)".
SlurmLimits asked_limits(SlurmLimits limits, const std::vector<std::string>& sbatch_args);

// Why an array task ended without finishing its run, said to a person: from its log, where Slurm
// writes why it killed a task (over its --mem or --time) and lenlab its error. `asked`: the
// limits it ran under (asked_limits), named in the sentence.
std::string slurm_task_failure(const std::string& log_text, const SlurmLimits& asked);

// Submits the array tasks of `runs` (the whole plan, in the script's order) whose runs are not
// finished under o.out, or, when job.json names a job that is still queued, watches that one; one
// progress bar counts the finished run folders. `limits`: what the script asks for. When the job
// has left the queue: all runs finished, the figures are drawn (exit 0); otherwise each unfinished
// run is named with why, and running the same command again resubmits only those (exit 1). sbatch
// refusing the job is a UsageError carrying its message.
int submit_and_watch(const ExperimentOptions& o, const std::vector<PlannedRun>& runs,
                     const std::filesystem::path& script, const SlurmLimits& limits);

}  // namespace lenlab
