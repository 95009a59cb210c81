#pragma once
// What a run or a sweep may use: the machine's memory and a wall time, checked against the
// estimates of cost/run_cost.hpp before anything starts, so that a typo (`--l-test 100000`,
// `--seeds 2000000000`) is one clear error instead of hours of work or a crash.
//   --max-memory SIZE   default: the memory this machine has available now (/proc/meminfo)
//   --max-time DURATION default: 24h
#include <iosfwd>
#include <string>
#include <vector>

#include "cost/run_cost.hpp"

namespace lenlab {

// Work estimated to take at least this long is announced with its estimate before it starts.
inline constexpr double kAnnounceSeconds = 60;

struct Budget {
  std::string max_memory;  // as given ("" = the available memory), e.g. "4G"
  std::string max_time = "24h";
};

// "512M", "4G", "1.5GiB", "2TB", "1000000" (bytes): decimal (k, M, G, T = 10^3…) or binary (Ki,
// Mi, Gi, Ti = 2^10…) prefixes, an optional "B". UsageError naming `flag` otherwise.
double parse_size(const std::string& text, const std::string& flag);
// "90s", "30m", "12h", "2d", "1h30m", or seconds ("600"). UsageError naming `flag` otherwise.
double parse_duration(const std::string& text, const std::string& flag);
// MemAvailable from /proc/meminfo (else physical pages free), in bytes.
double available_memory_bytes();
std::string format_bytes(double bytes);  // "812 MB", "1.4 GB"
std::string format_flops(double flops);  // "3.2e+12 FLOP"

// The estimate of some work with its limits, for the line printed before long work starts.
struct WorkEstimate {
  double peak_bytes = 0, memory_limit = 0;
  double flops = 0, seconds = 0, time_limit = 0;
  std::string where;              // "1 CPU thread", "2 CPU workers", "the GPU"
  std::string time_text() const;  // "2m10s", "3.1 years"
  std::string summary() const;    // "about 1.2 GB of memory and 3.4e+12 FLOP, ~2m10s on …"
};

// One run (lenlab train). Throws UsageError, naming the estimate, the limit, the settings that
// drive it and the flag that changes the limit, when the run needs more memory than the limit or
// more time than --max-time.
WorkEstimate check_run_budget(const CostedRun& run, const Budget& budget, bool gpu);

// Evaluating a trained run (lenlab eval): the evaluation's work and memory only, plus `extra`
// memory parts (e.g. the predictions file's text). The same refusal as check_run_budget.
WorkEstimate check_eval_budget(const CostedRun& run, const Budget& budget, bool gpu,
                               const std::vector<CostPart>& extra = {});

// Before a sweep is planned: the memory the plan itself takes for up to `n_runs` runs made from
// `n_seeds` seeds (so `--seeds 2000000000` is refused before it is materialised).
void check_plan_size(double n_runs, size_t n_seeds, const Budget& budget);

// A planned sweep: `jobs` runs side by side (their peaks add up), the work of every run shared
// among the workers.
WorkEstimate check_sweep_budget(const std::vector<CostedRun>& runs, int jobs, const Budget& budget,
                                bool gpu);

}  // namespace lenlab
