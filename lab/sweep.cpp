#include "lab/sweep.hpp"

#include <fmt/format.h>
#include <Eigen/Core>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "lab/run_record.hpp"
#include "lab/run_train.hpp"

namespace lenlab {

SweepOutcome run_sweep(const std::vector<PlannedRun>& runs, const std::filesystem::path& runs_dir,
                       const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SweepOutcome outcome;
  std::vector<const PlannedRun*> todo;
  int64_t total_units = 0;
  for (const PlannedRun& run : runs) {
    resolve(run.spec);  // fail before anything starts
    const std::optional<RunRecord> found = load_run(runs_dir / run.id);
    if (found && (found->status == "completed" || found->status == "diverged")) {
      if (canonical_spec_text(found->spec) != canonical_spec_text(run.spec))
        throw UsageError(fmt::format(
            "{} holds a run with other settings than the one planned under that id; remove it "
            "or choose another --out",
            (runs_dir / run.id).string()));
      ++outcome.skipped;
      outcome.diverged += found->status == "diverged";
      continue;
    }
    todo.push_back(&run);
    total_units += run.spec.steps + run.spec.l_test;
  }

  std::atomic<int64_t> units_done{0};
  std::atomic<size_t> next{0};
  std::atomic<int> finished{0}, diverged{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    while (!stop) {
      const size_t i = next++;
      if (i >= todo.size()) return;
      RunOptions ro;
      ro.out = runs_dir / todo[i]->id;
      ro.overwrite = true;  // a folder left by a killed run holds a "running" manifest
      ro.command_line = "lenlab sweep run " + todo[i]->id;
      ro.on_unit_done = [&] { ++units_done; };
      try {
        if (run_train(todo[i]->spec, ro) == kExitDiverged) ++diverged;
        ++finished;
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  const int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(todo.size())));
  // Sweep runs use one thread each (threads = 1 in configs/paper.toml): set Eigen's process-wide
  // count once here, so that run_train finds it set and never writes it from several threads.
  Eigen::setNbThreads(1);
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs && !todo.empty(); ++j) threads.emplace_back(worker);

  std::optional<Progress> bar;
  if (options.log && !todo.empty()) {
    *options.log << fmt::format("{} runs to train on {} worker(s); {} already on disk\n",
                                todo.size(), jobs, outcome.skipped);
    bar.emplace("runs", total_units, *options.log, options.log_is_tty);
  }
  while (!stop && finished < static_cast<int>(todo.size())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (bar) bar->update(units_done, fmt::format("{}/{} runs", finished.load(), todo.size()));
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  if (bar) bar->finish(fmt::format("{}/{} runs", finished.load(), todo.size()));

  outcome.ran = finished;
  outcome.diverged += diverged;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace lenlab
