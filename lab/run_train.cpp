#include "lab/run_train.hpp"

#include <omp.h>
#include <Eigen/Core>

#include "lab/device.hpp"
#include "lab/dry_run.hpp"
#include "lab/gpu_runs.hpp"
#include "lab/init_from.hpp"
#include "lab/run_group_impl.hpp"
#include "models/backend.hpp"

namespace lenlab {

int run_train(const TrainSpec& given, const RunOptions& options) {
  // --init-from: the parent checked and named by id, before anything else is looked at
  const TrainSpec spec = with_parent_id(given);
  const ResolvedSpec resolved = resolve(spec);  // bad input is a UsageError before anything else
  const ResolvedDevice device = resolve_device(options.device, resolved.float64);
  // Work that cannot fit the machine (or the time budget) is refused before anything is written;
  // long work says up front what it will take.
  const WorkEstimate estimate = check_run_budget(spec, resolved.model, options.budget, device.cuda);
  if (options.log && estimate.seconds >= kAnnounceSeconds)
    *options.log
        << "estimated: "
        << (device.cuda ? estimate : with_measured_time(estimate, {{"", spec, ""}}, 1, 1)).summary()
        << "\n";
#if LENLAB_WITH_CUDA
  if (device.cuda) return run_train_gpu_group({{spec, options}}).front();
#endif
  return run_train_cpu_group({{spec, options}}).front();
}

std::vector<int> run_train_cpu_group(const std::vector<GroupJob>& jobs) {
  const int threads = jobs.at(0).spec.threads;
  omp_set_num_threads(threads);  // this thread's OpenMP team size (attention)
  // Eigen's thread count is process-wide: only write it when it changes, so that runs side by side
  // in a sweep (which sets it once, before starting them) never write it concurrently.
  if (Eigen::nbThreads() != threads) Eigen::setNbThreads(threads);
  if (jobs.at(0).spec.precision == "float64") return run_group_on<CpuBackend<double>>(jobs, "cpu");
  return run_group_on<CpuBackend<float>>(jobs, "cpu");
}

}  // namespace lenlab
