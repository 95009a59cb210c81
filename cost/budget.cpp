#include "cost/budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "core/progress.hpp"

namespace lenlab {

namespace {

// Bytes a planned run takes before it trains: its settings, its id, the sweep's bookkeeping.
constexpr double kBytesPerPlannedRun = 1024;
// What the program holds besides the runs: code, libraries, allocator slack.
constexpr double kBaseBytes = 32e6;

// A number followed by a unit suffix; false when `text` is not exactly that.
bool split_number(const std::string& text, double& value, std::string& unit) {
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return false;
  }
  unit = text.substr(used);
  return std::isfinite(value);
}

double memory_limit(const Budget& b) {
  return b.max_memory.empty() ? available_memory_bytes() : parse_size(b.max_memory, "--max-memory");
}

std::string memory_flag_hint(const Budget& b) {
  return b.max_memory.empty()
             ? fmt::format("the {} this machine has available (--max-memory changes the limit)",
                           format_bytes(available_memory_bytes()))
             : fmt::format("--max-memory {}", b.max_memory);
}

const CostPart& largest(const std::vector<CostPart>& parts) {
  return *std::max_element(parts.begin(), parts.end(), [](const CostPart& a, const CostPart& b) {
    return a.amount < b.amount;
  });
}

}  // namespace

double parse_size(const std::string& text, const std::string& flag) {
  double value = 0;
  std::string unit;
  const auto bad = [&] {
    return UsageError(fmt::format(
        "{} '{}' is not a size; write bytes or a number with a unit, e.g. 512M, 4G, 1.5GiB", flag,
        text));
  };
  if (!split_number(text, value, unit)) throw bad();
  std::string u;
  for (char c : unit)
    if (c != ' ') u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.size() > 1 && u.back() == 'B') u.pop_back();
  const std::vector<std::pair<std::string, double>> units = {
      {"", 1},     {"B", 1},      {"K", 1e3},     {"M", 1e6},     {"G", 1e9},
      {"T", 1e12}, {"KI", 1024.}, {"MI", 0x1p20}, {"GI", 0x1p30}, {"TI", 0x1p40}};
  for (const auto& [name, scale] : units)
    if (u == name) {
      if (!(value > 0))
        throw UsageError(fmt::format("{} must be a positive size, got '{}'", flag, text));
      return value * scale;
    }
  throw bad();
}

double parse_duration(const std::string& text, const std::string& flag) {
  const auto bad = [&] {
    return UsageError(fmt::format(
        "{} '{}' is not a duration; write seconds or a number with a unit, e.g. 90s, 30m, 12h, "
        "2d, 1h30m",
        flag, text));
  };
  double total = 0;
  std::string rest = text;
  if (rest.empty()) throw bad();
  while (!rest.empty()) {
    double value = 0;
    std::string unit;
    if (!split_number(rest, value, unit) || value < 0) throw bad();
    const size_t unit_len = std::min<size_t>(1, unit.size());
    const std::string u = unit.substr(0, unit_len);
    const double scale = u.empty()  ? 1
                         : u == "s" ? 1
                         : u == "m" ? 60
                         : u == "h" ? 3600
                         : u == "d" ? 86400
                                    : -1;
    if (scale < 0) throw bad();
    total += value * scale;
    rest = unit.substr(unit_len);
    if (u.empty() && !rest.empty()) throw bad();
  }
  if (!(total > 0)) throw UsageError(fmt::format("{} must be positive, got '{}'", flag, text));
  return total;
}

double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double value = 0;
  while (in >> key >> value >> unit)
    if (key == "MemAvailable:") return value * 1024;
  return static_cast<double>(::sysconf(_SC_AVPHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
}

std::string format_bytes(double bytes) {
  if (bytes < 1e6) return fmt::format("{:.0f} kB", bytes / 1e3);
  if (bytes < 1e9) return fmt::format("{:.0f} MB", bytes / 1e6);
  if (bytes < 1e12) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.3g} TB", bytes / 1e12);
}

std::string format_flops(double flops) {
  return fmt::format("{:.2g} FLOP", flops);
}

std::string WorkEstimate::time_text() const {
  const double years = seconds / (365.25 * 86400);
  return years >= 1 ? fmt::format("{:.3g} years", years) : format_duration(std::max(seconds, 1.0));
}

std::string WorkEstimate::summary() const {
  return fmt::format("about {} of memory and {}, ~{} on {}", format_bytes(peak_bytes),
                     format_flops(flops), time_text(), where);
}

namespace {

// The same refusal for a run and a sweep: `what` names it ("this run", "this sweep of 87 runs");
// the parts are those of the run that needs the most memory, and of the one with the most work.
void refuse_if_over(const WorkEstimate& e, const Budget& budget, const std::string& what,
                    const std::vector<CostPart>& memory_parts,
                    const std::vector<CostPart>& work_parts) {
  if (e.peak_bytes > e.memory_limit) {
    const CostPart& top = largest(memory_parts);
    throw UsageError(fmt::format(
        "{} needs about {} of memory, more than {}; most of it is {} ({}), set by {}: lower "
        "those",
        what, format_bytes(e.peak_bytes), memory_flag_hint(budget), top.what,
        format_bytes(top.amount), top.settings));
  }
  if (e.seconds > e.time_limit) {
    const CostPart& top = largest(work_parts);
    throw UsageError(fmt::format(
        "{} would take about {} ({} on {}), more than --max-time {}; most of it is {}, set by "
        "{}: lower those, or raise --max-time",
        what, e.time_text(), format_flops(e.flops), e.where, budget.max_time, top.what,
        top.settings));
  }
}

// One run's parts (all of them, or without those only training needs) against the budget.
WorkEstimate check_parts(const TrainSpec& spec, std::vector<CostPart> memory,
                         std::vector<CostPart> work, bool with_training, const Budget& budget,
                         bool gpu, const std::string& what) {
  const auto training_only = [&](const CostPart& p) { return !with_training && p.training; };
  memory.erase(std::remove_if(memory.begin(), memory.end(), training_only), memory.end());
  work.erase(std::remove_if(work.begin(), work.end(), training_only), work.end());
  WorkEstimate e;
  e.peak_bytes = kBaseBytes;
  for (const CostPart& p : memory) e.peak_bytes += p.amount;
  for (const CostPart& p : work) e.flops += p.amount;
  e.memory_limit = memory_limit(budget);
  e.seconds = gpu ? gpu_seconds(e.flops, with_training ? spec.steps : 0)
                  : e.flops / (kCpuFlopsPerSecondPerThread * spec.threads);
  e.time_limit = parse_duration(budget.max_time, "--max-time");
  e.where =
      gpu ? "the GPU" : fmt::format("{} CPU thread{}", spec.threads, spec.threads > 1 ? "s" : "");
  refuse_if_over(e, budget, what, memory, work);
  return e;
}

}  // namespace

WorkEstimate check_run_budget(const CostedRun& run, const Budget& budget, bool gpu) {
  return check_parts(run.spec, run.cost.memory_parts, run.cost.work_parts, true, budget, gpu,
                     "this run");
}

WorkEstimate check_eval_budget(const CostedRun& run, const Budget& budget, bool gpu,
                               const std::vector<CostPart>& extra) {
  std::vector<CostPart> memory = run.cost.memory_parts;
  memory.insert(memory.end(), extra.begin(), extra.end());
  return check_parts(run.spec, memory, run.cost.work_parts, false, budget, gpu, "this evaluation");
}

void check_plan_size(double runs, size_t n_seeds, const Budget& budget) {
  const double bytes = kBaseBytes + runs * kBytesPerPlannedRun + n_seeds * 8.0;
  const double limit = memory_limit(budget);
  if (bytes > limit)
    throw UsageError(fmt::format(
        "{} seeds make up to {:.3g} runs; planning them alone needs {} of memory, more than {}: "
        "use fewer --seeds (or fewer in the config's 'seeds')",
        n_seeds, runs, format_bytes(bytes), memory_flag_hint(budget)));
}

WorkEstimate check_sweep_budget(const std::vector<CostedRun>& runs, int jobs, const Budget& budget,
                                bool gpu) {
  WorkEstimate e;
  std::vector<double> peaks;
  std::vector<CostPart> memory_parts, work_parts;
  size_t heaviest_memory = 0;
  double most_work = 0, longest_steps = 0;
  for (const CostedRun& r : runs) {
    longest_steps = std::max<double>(longest_steps, r.spec.steps);
    const RunCost& cost = r.cost;
    peaks.push_back(cost.peak_bytes);
    e.flops += cost.flops();
    if (memory_parts.empty() || cost.peak_bytes > peaks[heaviest_memory]) {
      heaviest_memory = peaks.size() - 1;
      memory_parts = cost.memory_parts;
    }
    if (work_parts.empty() || cost.flops() > most_work) {
      most_work = cost.flops();
      work_parts = cost.work_parts;
    }
  }
  // The `jobs` largest runs side by side.
  const int side_by_side = std::min<int>(jobs, static_cast<int>(peaks.size()));
  std::partial_sort(peaks.begin(), peaks.begin() + side_by_side, peaks.end(), std::greater<>());
  double running = 0;
  for (int i = 0; i < side_by_side; ++i) running += peaks[i];
  e.peak_bytes = kBaseBytes + runs.size() * kBytesPerPlannedRun + running;
  e.memory_limit = memory_limit(budget);
  const int workers = std::max(1, side_by_side);
  // On the GPU the runs train in groups side by side, each group in lockstep: at least the
  // longest run's steps.
  e.seconds =
      gpu ? gpu_seconds(e.flops, longest_steps) : e.flops / (kCpuFlopsPerSecondPerThread * workers);
  e.time_limit = parse_duration(budget.max_time, "--max-time");
  e.where = gpu ? "the GPU" : fmt::format("{} CPU worker{}", workers, workers > 1 ? "s" : "");
  if (!memory_parts.empty())
    refuse_if_over(e, budget,
                   fmt::format("this sweep of {} runs ({} at a time)", runs.size(), workers),
                   memory_parts, work_parts);
  return e;
}

}  // namespace lenlab
