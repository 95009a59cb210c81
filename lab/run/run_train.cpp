#include "lab/run/run_train.hpp"

#include "cost/admission.hpp"
#include "cost/preflight.hpp"
#include "lab/run/device.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_group.hpp"

namespace lenlab {

int run_train(const TrainSpec& given, const RunOptions& options) {
  // --init-from: the parent checked and named by id, before anything else is looked at.
  TrainSpec spec = with_parent_id(given);
  // The device first (a quick query), so that the cheap look below costs the run where it will
  // train: `--device auto` on a machine without a GPU is the CPU.
  const Device device = Device::choose(options.device, spec.precision == "float64");
  // A run far past --max-time is refused from its settings alone, before resolve() checks its
  // reparam at every target up to --l-test (cost/preflight.hpp).
  preflight_run(spec, options.budget, device.gpu());
  // Resolved once (bad input is a UsageError before anything is written), for the cost and the
  // training.
  const GroupJob job(std::move(spec), options);
  // Work that cannot fit the machine (or the time budget) is refused before anything is written;
  // long work says up front what it will take.
  admit(Work::train(job.spec, job.resolved.model, device.gpu()), options.budget, options.log);
  return device.train({job}).front();
}

}  // namespace lenlab
