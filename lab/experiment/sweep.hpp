#pragma once
// Runs many independent training runs side by side, one per worker thread (for models this small,
// one run per core beats one run spread over cores), each into runs_dir/<run id>/. A run whose
// folder already holds a finished run (completed or diverged) with the same settings is skipped,
// so a killed sweep resumes where it stopped; results are identical to an uninterrupted sweep
// because every run is deterministic in its settings.
// On the GPU, the runs that share a model shape (lab/run/run_group.hpp) train together, up to
// kMaxModelsPerGroup in one group, and `jobs` groups train at once, each on its own stream.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "cost/run_cost.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/run/device.hpp"

namespace lenlab {

struct SweepOptions {
  int jobs = 1;                 // worker threads: runs (CPU) or groups of runs (GPU) at a time
  Device device;                // chosen by the caller (lab/run/device.hpp)
  std::ostream* log = nullptr;  // one overall progress bar with ETA; null = silent
  bool log_is_tty = false;
  // Called about ten times a second on the calling thread while runs train, with the fraction of
  // the sweep's estimated work done (the Python module's progress bar, and its check for Ctrl-C).
  // If it throws, every worker stops at its next training step or test
  // length (those runs stay "running", as a killed sweep leaves them; finished runs are kept) and
  // run_sweep rethrows it.
  std::function<void(double)> on_tick;
  // The runs admitted already (cost/admission.hpp's admit_sweep), by id: trained from their
  // resolved settings and counted by their estimate, not resolved again.
  std::map<std::string, const CostedRun*> costed;
};

struct SweepOutcome {
  int ran = 0;       // trained now
  int skipped = 0;   // already on disk
  int diverged = 0;  // among all, finished as diverged
  double seconds = 0;
};

// Throws UsageError if a folder holds a finished run with different settings, or when a run's
// settings are invalid (checked for every run before any starts).
SweepOutcome run_sweep(const std::vector<PlannedRun>& runs, const std::filesystem::path& runs_dir,
                       const SweepOptions& options);

}  // namespace lenlab
