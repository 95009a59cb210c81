#pragma once
// The one call made before any work starts (lenlab train, lenlab eval, a sweep, the live page):
// may this work start on this machine within its budget, and how long will it take? It sums the
// work's estimate (cost/run_cost.hpp), holds it against the budget (cost/budget.hpp), and
// announces long work with its time predicted from this core's measured rates
// (cost/time_model.hpp, cost/dry_run.hpp).
#include <iosfwd>
#include <vector>

#include "cost/budget.hpp"
#include "cost/time_model.hpp"

namespace lenlab {

struct Work {
  enum class Kind {
    kTrain,     // one run: training and its evaluation
    kEvaluate,  // a trained run evaluated again: the evaluation alone
    kSweep,     // many runs, `jobs` side by side
  };
  Kind kind = Kind::kTrain;
  // kTrain, kEvaluate: the one run's settings (an evaluation's: the run's, as the flags change
  // them); kSweep: the runs still to train, in the order the sweep hands them out.
  std::vector<TrainSpec> runs;
  ModelConfig model;  // kTrain, kEvaluate: the trained model's (resolve(runs[0]).model)
  std::vector<CostPart> extra_memory;  // kEvaluate: the files it keeps as text (predictions.csv)
  int jobs = 1;                        // kSweep: workers
  int cores = 1;                       // kSweep: the machine's (more jobs than cores share them)
  bool gpu = false;                    // the work runs on the GPU (lab/run/device.hpp)
  CpuSpeed fixed_speed;  // this core's rates when known (tests); 0: measured when they are needed

  static Work train(const TrainSpec& spec, const ModelConfig& model, bool gpu);
  static Work evaluate(const TrainSpec& spec, const ModelConfig& model, bool gpu,
                       std::vector<CostPart> extra_memory);
  static Work sweep(std::vector<TrainSpec> runs, int jobs, int cores, bool gpu,
                    const CpuSpeed& fixed_speed = {});
};

// Returns the work's estimate, or throws UsageError when it needs more memory than the budget
// (or the machine) allows, or more time than --max-time: the message names the estimate, the
// limit, the settings that drive it and the flag that changes the limit. Work estimated to take
// kAnnounceSeconds or more says so on `log` ("estimated: ..."), on the CPU with its time from
// this core's measured rates for training work (about a second to measure, against minutes of
// work).
WorkEstimate admit(const Work& work, const Budget& budget, std::ostream* log = nullptr);

}  // namespace lenlab
