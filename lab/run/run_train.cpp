#include "lab/run/run_train.hpp"

#include "cost/admission.hpp"
#include "lab/run/device.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_group.hpp"

namespace lenlab {

int run_train(const TrainSpec& given, const RunOptions& options) {
  // --init-from: the parent checked and named by id, before anything else is looked at.
  TrainSpec spec = with_parent_id(given);
  // The device first (a quick query), so that the run is costed where it will train: `--device
  // auto` on a machine without a GPU is the CPU.
  const Device device = Device::choose(options.device, spec.precision == "float64");
  // Resolved and costed once: bad input, or work that cannot fit the machine (or the time budget),
  // is refused before anything is written; long work says up front what it will take.
  CostedRun run = admit_run(spec, options.budget, {.gpu = device.gpu()}, options.log);
  const GroupJob job(std::move(run.spec), std::move(run.resolved), options);
  return device.train({job}).front();
}

}  // namespace lenlab
