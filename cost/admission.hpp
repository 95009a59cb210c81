#pragma once
// The one call made before any work starts (lenlab train, lenlab eval, a sweep, the live page):
// may this work start on this machine within its budget, and how long will it take? Each call
// takes the work's settings, refuses work far past --max-time from its settings alone
// (cost/preflight.hpp: microseconds, before resolve() checks a reparam at every target), resolves
// and costs each run once (CostedRun, cost/run_cost.hpp), holds the estimate against the budget
// (cost/budget.hpp), announces long work with its time predicted from this core's measured rates
// (cost/time_model.hpp, cost/dry_run.hpp), and hands the costed runs back: the work starts from
// them, resolving nothing again.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "cost/budget.hpp"
#include "cost/time_model.hpp"

namespace lenlab {

// Where work runs, as cost/ needs to know it.
struct WorkPlace {
  bool gpu = false;        // the GPU (lab/run/device.hpp), at its fixed rate; else this CPU
  int jobs = 1;            // runs side by side (a sweep's workers)
  int cores = 1;           // the machine's: more jobs than cores share them
  CpuSpeed fixed_speed{};  // this core's rates when known (tests); 0: measured when needed
};

// One run: lenlab train and the live page. UsageError naming the bad setting (resolve()), or the
// estimate, the limit, the settings that drive it and the flag that changes the limit (more memory
// than the budget or the machine allows, more time than --max-time). Work estimated to take
// kAnnounceSeconds or more says so on `log` ("estimated: ..."), its time from this core's
// measured rates (about a second to measure, against minutes of work).
CostedRun admit_run(const TrainSpec& spec, const Budget& budget, const WorkPlace& where,
                    std::ostream* log = nullptr);

// A trained run evaluated again (lenlab eval): `run` is its settings as the flags change them,
// resolved by the evaluation's plan (train/eval_plan.hpp); the evaluation's own work and memory
// only, plus `extra` memory (the files it keeps as text: predictions.csv).
WorkEstimate admit_evaluation(const CostedRun& run, const Budget& budget, const WorkPlace& where,
                              const std::vector<CostPart>& extra, std::ostream* log = nullptr);

// The runs a sweep is about to train, `where.jobs` side by side: each resolved and costed (a
// UsageError is prefixed with name(i), the i-th run's name, when given), their peak memory side
// by side and their work held against the budget.
struct AdmittedSweep {
  std::vector<CostedRun> runs;
  WorkEstimate estimate;
};
AdmittedSweep admit_sweep(const std::vector<TrainSpec>& runs, const Budget& budget,
                          const WorkPlace& where, std::ostream* log = nullptr,
                          const std::function<std::string(size_t)>& name = {});

}  // namespace lenlab
