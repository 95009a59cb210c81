#include "cost/admission.hpp"

#include <fmt/format.h>

#include <ostream>
#include <utility>

#include "cost/dry_run.hpp"
#include "cost/preflight.hpp"

namespace lenlab {

namespace {

// Long work says how long on `log`: training's rates measured on this core for the line; an
// evaluation and the GPU keep the budget's fixed rate.
void announce(const WorkEstimate& estimate, const std::vector<CostedRun>& runs, bool training,
              const WorkPlace& where, std::ostream* log) {
  if (!log || estimate.seconds < kAnnounceSeconds) return;
  const bool measured = !where.gpu && training;
  *log << "estimated: "
       << (measured ? with_measured_time(estimate, runs, where.jobs, where.cores, where.fixed_speed)
                    : estimate)
              .summary()
       << "\n";
}

}  // namespace

CostedRun admit_run(const TrainSpec& spec, const Budget& budget, const WorkPlace& where,
                    std::ostream* log) {
  preflight_run(spec, budget, where.gpu);
  CostedRun run(spec);
  const WorkEstimate estimate = check_run_budget(run, budget, where.gpu);
  WorkPlace one = where;
  one.jobs = one.cores = 1;
  announce(estimate, {run}, true, one, log);
  return run;
}

WorkEstimate admit_evaluation(const CostedRun& run, const Budget& budget, const WorkPlace& where,
                              const std::vector<CostPart>& extra, std::ostream* log) {
  const WorkEstimate estimate = check_eval_budget(run, budget, where.gpu, extra);
  announce(estimate, {run}, false, where, log);
  return estimate;
}

AdmittedSweep admit_sweep(const std::vector<TrainSpec>& runs, const Budget& budget,
                          const WorkPlace& where, std::ostream* log,
                          const std::function<std::string(size_t)>& name) {
  preflight_sweep(runs, where.jobs, budget, where.gpu);
  AdmittedSweep sweep;
  sweep.runs.reserve(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    try {
      sweep.runs.emplace_back(runs[i]);
    } catch (const UsageError& e) {
      if (!name) throw;
      throw UsageError(fmt::format("{}: {}", name(i), e.what()));
    }
  }
  sweep.estimate = check_sweep_budget(sweep.runs, where.jobs, budget, where.gpu);
  announce(sweep.estimate, sweep.runs, true, where, log);
  return sweep;
}

}  // namespace lenlab
