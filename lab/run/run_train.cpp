#include "lab/run/run_train.hpp"

#include "cost/admission.hpp"
#include "cost/preflight.hpp"
#include "lab/run/device.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_group.hpp"

namespace lenlab {

int run_train(const TrainSpec& given, const RunOptions& options) {
  // --init-from: the parent checked and named by id, before anything else is looked at
  // Resolved once (bad input is a UsageError before anything else), for the device, the cost
  // and the training.
  TrainSpec spec = with_parent_id(given);
  // A run far past --max-time is refused from its settings alone, before resolve() checks its
  // reparam at every target (cost/preflight.hpp); the device is not chosen yet: maybe a GPU.
  preflight_run(spec, options.budget, options.device != "cpu");
  const GroupJob job(std::move(spec), options);
  const Device device = Device::choose(options.device, job.resolved.float64);
  // Work that cannot fit the machine (or the time budget) is refused before anything is written;
  // long work says up front what it will take.
  admit(Work::train(job.spec, job.resolved.model, device.gpu()), options.budget, options.log);
  return device.train({job}).front();
}

}  // namespace lenlab
