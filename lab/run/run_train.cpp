#include "lab/run/run_train.hpp"

#include "cost/admission.hpp"
#include "lab/run/device.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_group.hpp"

namespace lenlab {

int run_train(const TrainSpec& given, const RunOptions& options) {
  // --init-from: the parent checked and named by id, before anything else is looked at
  const TrainSpec spec = with_parent_id(given);
  const ResolvedSpec resolved = resolve(spec);  // bad input is a UsageError before anything else
  const Device device = Device::choose(options.device, resolved.float64);
  // Work that cannot fit the machine (or the time budget) is refused before anything is written;
  // long work says up front what it will take.
  admit(Work::train(spec, resolved.model, device.gpu()), options.budget, options.log);
  return device.train({{spec, options}}).front();
}

}  // namespace lenlab
