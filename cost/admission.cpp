#include "cost/admission.hpp"

#include <ostream>
#include <utility>

#include "cost/dry_run.hpp"

namespace lenlab {

Work Work::train(const TrainSpec& spec, const ModelConfig& model, bool gpu) {
  Work w;
  w.kind = Kind::kTrain;
  w.runs = {spec};
  w.model = model;
  w.gpu = gpu;
  return w;
}

Work Work::evaluate(const TrainSpec& spec, const ModelConfig& model, bool gpu,
                    std::vector<CostPart> extra_memory) {
  Work w = train(spec, model, gpu);
  w.kind = Kind::kEvaluate;
  w.extra_memory = std::move(extra_memory);
  return w;
}

Work Work::sweep(std::vector<TrainSpec> runs, int jobs, int cores, bool gpu,
                 const CpuSpeed& fixed_speed) {
  Work w;
  w.kind = Kind::kSweep;
  w.runs = std::move(runs);
  w.jobs = jobs;
  w.cores = cores;
  w.gpu = gpu;
  w.fixed_speed = fixed_speed;
  return w;
}

WorkEstimate admit(const Work& work, const Budget& budget, std::ostream* log) {
  WorkEstimate estimate;
  switch (work.kind) {
    case Work::Kind::kTrain:
      estimate = check_run_budget(work.runs.at(0), work.model, budget, work.gpu);
      break;
    case Work::Kind::kEvaluate:
      estimate =
          check_eval_budget(work.runs.at(0), work.model, budget, work.gpu, work.extra_memory);
      break;
    case Work::Kind::kSweep:
      estimate = check_sweep_budget(work.runs, work.jobs, budget, work.gpu);
      break;
  }
  if (!log || estimate.seconds < kAnnounceSeconds) return estimate;
  // Training's rates are measured here for the line; an evaluation and the GPU keep the budget's
  // fixed rate.
  const bool measured = !work.gpu && work.kind != Work::Kind::kEvaluate;
  const int jobs = work.kind == Work::Kind::kSweep ? work.jobs : 1;
  const int cores = work.kind == Work::Kind::kSweep ? work.cores : 1;
  *log << "estimated: "
       << (measured ? with_measured_time(estimate, work.runs, jobs, cores, work.fixed_speed)
                    : estimate)
              .summary()
       << "\n";
  return estimate;
}

}  // namespace lenlab
