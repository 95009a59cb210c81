#include "lab/experiment/slurm_script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost/run_cost.hpp"
#include "lab/run/run_train.hpp"

namespace lenlab {

namespace fs = std::filesystem;

SlurmLimits slurm_limits(const std::vector<PlannedRun>& runs,
                         const std::map<SpeedShape, CpuSpeed>& speeds) {
  double bytes = 0, seconds = 0;
  SlurmLimits limits;
  for (const PlannedRun& r : runs) {
    const RunCost cost = estimate_run_cost(r.spec, resolve(r.spec).model);
    const CpuSpeed& speed = speeds.at(speed_shape(r.spec));
    bytes = std::max(bytes, cost.peak_bytes);
    seconds = std::max(seconds, predicted_train_seconds(cost, speed, r.spec.threads) +
                                    predicted_eval_seconds(cost, speed, r.spec.threads));
    limits.cpus = std::max(limits.cpus, r.spec.threads);
  }
  // 32 MB for the program itself; the estimates leave out allocator slack and the OS's view of it.
  // 3x the time: a compute node may be slower than this one, or shared.
  const long gib = std::max(1L, static_cast<long>(std::ceil((32e6 + 1.5 * bytes) / 0x1p30)));
  const long total = std::max(600L, static_cast<long>(std::ceil(3 * seconds)));
  limits.mem = fmt::format("{}G", gib);
  limits.time = fmt::format("{}-{:02}:{:02}:{:02}", total / 86400, total % 86400 / 3600,
                            total % 3600 / 60, total % 60);
  return limits;
}

std::string slurm_script(const ExperimentOptions& o, const std::vector<PlannedRun>& runs,
                         const SlurmLimits& limits, const fs::path& log_dir) {
  std::string figures;
  for (size_t i = 0; i < o.figures.size(); ++i) figures += (i ? "," : "") + o.figures[i];
  const fs::path dir = fs::absolute(o.out);
  return fmt::format(
      "#!/bin/bash\n"
      "# One array task per lenlab run; each writes {dir}/runs/<run id>/, and one whose run is\n"
      "# finished there exits at once (resubmit this script to train what is missing).\n"
      "# When all are done:\n"
      "#   {lenlab} plot {dir}\n"
      "# --mem and --time come from lenlab's cost estimate of the largest run; sbatch's own\n"
      "# options (sbatch --partition=... --account=... --gres=gpu:1 {script}) override them.\n"
      "#SBATCH --job-name=lenlab\n"
      "#SBATCH --array=0-{last}\n"
      "#SBATCH --cpus-per-task={cpus}\n"
      "#SBATCH --mem={mem}\n"
      "#SBATCH --time={time}\n"
      "#SBATCH --output={logs}/run-%a.log\n"
      "set -euo pipefail\n"
      "exec {lenlab} run {dir}/config.toml --out {dir} --run-index "
      "\"$SLURM_ARRAY_TASK_ID\"{figs}{seeds}{device}\n",
      fmt::arg("dir", dir.string()), fmt::arg("lenlab", o.lenlab_path), fmt::arg("mem", limits.mem),
      fmt::arg("time", limits.time), fmt::arg("cpus", limits.cpus),
      fmt::arg("last", runs.size() - 1), fmt::arg("logs", fs::absolute(log_dir).string()),
      fmt::arg("script", (fs::absolute(log_dir) / "lenlab.sbatch").string()),
      fmt::arg("figs", figures.empty() ? "" : " --figures " + figures),
      fmt::arg("seeds", o.n_seeds > 0 ? fmt::format(" --seeds {}", o.n_seeds) : ""),
      // Each task chooses its device on its own node; a --device given here holds there too.
      fmt::arg("device", o.device == "auto" ? "" : " --device " + o.device));
}

}  // namespace lenlab
