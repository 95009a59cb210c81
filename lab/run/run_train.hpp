#pragma once
// One run, end to end, into an output folder:
//   manifest.json      every setting (defaults included), seed, git revision, timings, status
//   loss.csv           step, lr, train loss (on f(y)), gradient norm before clipping
//   results.csv        one row per test length 1..l_test (see train/evaluate.hpp for the columns)
//   model.safetensors  the trained weights
// The manifest is written first with status "running" and last with "completed" (or "diverged"),
// each time atomically, so a folder whose manifest says "completed" holds a whole run.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "cost/budget.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct LengthResult;  // train/evaluate.hpp

// 1: the machine failed (a GPU error, say) although the input was fine.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitDiverged = 3 };

struct RunOptions {
  std::filesystem::path out;
  bool overwrite = false;       // replace a run already in `out`
  std::string command_line;     // recorded in the manifest
  std::ostream* log = nullptr;  // progress and summary; null = silent
  bool log_is_tty = false;
  std::string device = "auto";  // --device: auto, cpu or cuda (lab/run/device.hpp)
  Budget budget;                // --max-memory, --max-time: checked before anything is written
  // Called after each training step and each evaluated length with its estimated work in FLOPs
  // (cost/run_cost.hpp; a run's calls sum to its estimate's flops()): lets a sweep show one
  // progress bar over many runs, whose ETA weighs a long test length as the work it is.
  std::function<void(double)> on_work_done;
  // Called with each test length's result as soon as it is scored (train/evaluate.hpp's
  // EvalJob::on_result): `lenlab serve` draws the curve as it grows.
  std::function<void(const LengthResult&)> on_result;
  // For comparing training with another implementation (tools/torch_reference); empty: not
  // written, and nothing is done for them. The model's weights before the first step, as a
  // checkpoint (--save-init), and every step's batch (--save-batches, train/batch_log.hpp).
  std::filesystem::path save_init, save_batches;
};

// Returns kExitOk or kExitDiverged; throws UsageError (before writing anything) on bad input.
// On every device this is a group of one (lab/run/run_group.hpp).
int run_train(const TrainSpec& spec, const RunOptions& options);

}  // namespace lenlab
