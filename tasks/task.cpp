// Task names and targets: the part of a task that does not involve random sequences.
#include "tasks/task.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

struct TaskEntry {
  TaskKind kind;
  const char* name;
};

// Order = TaskKind order = the order error messages list the choices in.
constexpr std::array<TaskEntry, 24> kTasks = {
    {{TaskKind::kMean, "mean"},
     {TaskKind::kLength, "length"},
     {TaskKind::kSum, "sum"},
     {TaskKind::kMeanUniform, "mean-uniform"},
     {TaskKind::kPasskey, "passkey"},
     {TaskKind::kRecall, "recall"},
     {TaskKind::kCopy, "copy"},
     {TaskKind::kReverse, "reverse"},
     {TaskKind::kParity, "parity"},
     {TaskKind::kMarkov, "markov"},
     {TaskKind::kEvenPairs, "even-pairs"},
     {TaskKind::kCycleNavigation, "cycle-navigation"},
     {TaskKind::kModularArithmetic, "modular-arithmetic"},
     {TaskKind::kStackManipulation, "stack-manipulation"},
     {TaskKind::kModularArithmeticBrackets, "modular-arithmetic-brackets"},
     {TaskKind::kSolveEquation, "solve-equation"},
     {TaskKind::kDuplicateString, "duplicate-string"},
     {TaskKind::kMissingDuplicateString, "missing-duplicate-string"},
     {TaskKind::kOddsFirst, "odds-first"},
     {TaskKind::kBinaryAddition, "binary-addition"},
     {TaskKind::kBinaryMultiplication, "binary-multiplication"},
     {TaskKind::kComputeSqrt, "compute-sqrt"},
     {TaskKind::kBucketSort, "bucket-sort"},
     {TaskKind::kText, "text"}}};

}  // namespace

TaskKind parse_task(const std::string& name) {
  for (const auto& entry : kTasks) {
    if (name == entry.name) return entry.kind;
  }
  throw UsageError(
      fmt::format("unknown task '{}'; valid choices: {}", name, join_choices(task_names())));
}

std::string task_name(TaskKind task) {
  for (const auto& entry : kTasks) {
    if (entry.kind == task) return entry.name;
  }
  throw std::logic_error("task_name: TaskKind out of range");
}

TaskKind parse_scalar_task(const std::string& name) {
  const std::vector<std::string> names = scalar_task_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    const std::vector<std::string> all = task_names();
    const bool known = std::find(all.begin(), all.end(), name) != all.end();
    throw UsageError(fmt::format("{} task '{}'; valid choices: {}",
                                 known ? "not a scalar" : "unknown", name, join_choices(names)));
  }
  return parse_task(name);
}

std::vector<std::string> scalar_task_names() {
  std::vector<std::string> names;
  for (const auto& entry : kTasks)
    if (!is_token_task(entry.kind)) names.emplace_back(entry.name);
  return names;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& entry : kTasks) names.emplace_back(entry.name);
  return names;
}

double task_target(TaskKind task, int length, int n_ones) {
  if (length < 1) throw UsageError(fmt::format("sequence length must be >= 1 (got {})", length));
  if (n_ones < 0 || n_ones > length) {
    throw UsageError(fmt::format("number of ones must be in 0..{} for length {} (got {})", length,
                                 length, n_ones));
  }
  switch (task) {
    case TaskKind::kMean:
    case TaskKind::kMeanUniform:
      return static_cast<double>(n_ones) / static_cast<double>(length);
    case TaskKind::kLength:
      return static_cast<double>(length);
    case TaskKind::kSum:
      return static_cast<double>(n_ones);
    default:
      break;
  }
  throw std::logic_error("task_target: not a scalar task");
}

std::vector<double> task_target_values(TaskKind task, int l_min, int l_max) {
  if (l_min < 1) throw UsageError(fmt::format("minimum length must be >= 1 (got {})", l_min));
  if (l_max < l_min) {
    throw UsageError(fmt::format("maximum length {} is below the minimum length {}", l_max, l_min));
  }
  std::vector<double> values;
  switch (task) {
    case TaskKind::kLength:
      for (int l = l_min; l <= l_max; ++l) values.push_back(l);
      return values;
    case TaskKind::kSum:
      // n_ones runs over 0..l for every l, so the union is 0..l_max.
      for (int k = 0; k <= l_max; ++k) values.push_back(k);
      return values;
    case TaskKind::kMean:
    case TaskKind::kMeanUniform:
      // All fractions k/l: O(l_max^2) values before deduplication. Division is correctly rounded,
      // so equal fractions (1/3, 2/6) give bit-identical doubles and std::unique merges them.
      for (int l = l_min; l <= l_max; ++l) {
        for (int k = 0; k <= l; ++k) values.push_back(task_target(task, l, k));
      }
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
      return values;
    default:
      break;
  }
  throw std::logic_error("task_target_values: not a scalar task");
}

void check_batch_size(int64_t worst_tokens, int n_seq, int max_length) {
  if (worst_tokens > std::numeric_limits<int32_t>::max()) {
    throw UsageError(fmt::format(
        "batch of {} sequences of length up to {} is too large ({} tokens; the limit is {})", n_seq,
        max_length, worst_tokens, std::numeric_limits<int32_t>::max()));
  }
}

}  // namespace lenlab
