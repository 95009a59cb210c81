// Task names and targets: the part of a task that does not involve random sequences.
#include "tasks/task.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/scalar_tasks.hpp"

namespace lenlab {

// Each task's math, in its file of tasks/.
namespace tasks {
extern const ScalarTaskMath kMean, kLength, kSum, kMeanUniform;
extern const TokenTaskMath kPasskey, kRecall, kCopy, kReverse, kParity, kMarkov, kText;
extern const TokenTaskMath kEvenPairs, kCycleNavigation, kModularArithmetic;  // regular
extern const TokenTaskMath kStackManipulation, kModularArithmeticBrackets,
    kSolveEquation;  // deterministic context-free
extern const TokenTaskMath kDuplicateString, kMissingDuplicateString, kOddsFirst, kBinaryAddition,
    kBinaryMultiplication, kComputeSqrt, kBucketSort;  // context-sensitive
}  // namespace tasks

const std::vector<TaskInfo>& task_table() {
  using K = TaskKind;
  constexpr const char* kRegular = "regular";
  constexpr const char* kContextFree = "deterministic context-free";
  constexpr const char* kContextSensitive = "context-sensitive";
  // Order = TaskKind order = the order error messages list the choices in.
  static const std::vector<TaskInfo> table = {
      {.kind = K::kMean,
       .name = "mean",
       .metric = "mse",
       .misalignment = true,
       .scalar = &tasks::kMean},
      {.kind = K::kLength,
       .name = "length",
       .metric = "mse",
       .misalignment = true,
       .scalar = &tasks::kLength},
      {.kind = K::kSum,
       .name = "sum",
       .metric = "mse",
       .misalignment = true,
       .scalar = &tasks::kSum},
      {.kind = K::kMeanUniform,
       .name = "mean-uniform",
       .metric = "mse",
       .misalignment = true,
       .scalar = &tasks::kMeanUniform},
      {.kind = K::kPasskey, .name = "passkey", .token = &tasks::kPasskey},
      {.kind = K::kRecall, .name = "recall", .token = &tasks::kRecall},
      {.kind = K::kCopy, .name = "copy", .token = &tasks::kCopy},
      {.kind = K::kReverse, .name = "reverse", .level = kContextFree, .token = &tasks::kReverse},
      {.kind = K::kParity, .name = "parity", .level = kRegular, .token = &tasks::kParity},
      {.kind = K::kMarkov,
       .name = "markov",
       .metric = "excess_ce",
       .extra_metrics = "excess_ce",
       .misalignment = true,
       .token = &tasks::kMarkov},
      {.kind = K::kEvenPairs, .name = "even-pairs", .level = kRegular, .token = &tasks::kEvenPairs},
      {.kind = K::kCycleNavigation,
       .name = "cycle-navigation",
       .level = kRegular,
       .token = &tasks::kCycleNavigation},
      {.kind = K::kModularArithmetic,
       .name = "modular-arithmetic",
       .level = kRegular,
       .token = &tasks::kModularArithmetic},
      {.kind = K::kStackManipulation,
       .name = "stack-manipulation",
       .level = kContextFree,
       .token = &tasks::kStackManipulation},
      {.kind = K::kModularArithmeticBrackets,
       .name = "modular-arithmetic-brackets",
       .level = kContextFree,
       .token = &tasks::kModularArithmeticBrackets},
      {.kind = K::kSolveEquation,
       .name = "solve-equation",
       .level = kContextFree,
       .token = &tasks::kSolveEquation},
      {.kind = K::kDuplicateString,
       .name = "duplicate-string",
       .level = kContextSensitive,
       .token = &tasks::kDuplicateString},
      {.kind = K::kMissingDuplicateString,
       .name = "missing-duplicate-string",
       .level = kContextSensitive,
       .token = &tasks::kMissingDuplicateString},
      {.kind = K::kOddsFirst,
       .name = "odds-first",
       .level = kContextSensitive,
       .token = &tasks::kOddsFirst},
      {.kind = K::kBinaryAddition,
       .name = "binary-addition",
       .level = kContextSensitive,
       .token = &tasks::kBinaryAddition},
      {.kind = K::kBinaryMultiplication,
       .name = "binary-multiplication",
       .level = kContextSensitive,
       .token = &tasks::kBinaryMultiplication},
      {.kind = K::kComputeSqrt,
       .name = "compute-sqrt",
       .level = kContextSensitive,
       .token = &tasks::kComputeSqrt},
      {.kind = K::kBucketSort,
       .name = "bucket-sort",
       .level = kContextSensitive,
       .token = &tasks::kBucketSort},
      {.kind = K::kText,
       .name = "text",
       .metric = "perplexity",
       .extra_metrics = "perplexity,bits_per_char",
       .token = &tasks::kText},
  };
  return table;
}

const TaskInfo& task_info(TaskKind task) {
  const std::vector<TaskInfo>& table = task_table();
  const size_t i = static_cast<size_t>(task);
  if (i < table.size() && table[i].kind == task) return table[i];  // rows in enumerator order
  for (const TaskInfo& row : table)
    if (row.kind == task) return row;
  throw std::logic_error("task_info: a task without its row (tasks/task.cpp)");
}

TaskKind parse_task(const std::string& name) {
  for (const TaskInfo& row : task_table())
    if (name == row.name) return row.kind;
  throw UsageError(
      fmt::format("unknown task '{}'; valid choices: {}", name, join_choices(task_names())));
}

std::string task_name(TaskKind task) {
  return task_info(task).name;
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
  for (const TaskInfo& row : task_table())
    if (row.scalar) names.emplace_back(row.name);
  return names;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskInfo& row : task_table()) names.emplace_back(row.name);
  return names;
}

double task_target(TaskKind task, int length, int n_ones) {
  if (length < 1) throw UsageError(fmt::format("sequence length must be >= 1 (got {})", length));
  if (n_ones < 0 || n_ones > length) {
    throw UsageError(fmt::format("number of ones must be in 0..{} for length {} (got {})", length,
                                 length, n_ones));
  }
  const ScalarTaskMath* math = task_info(task).scalar;
  if (!math) throw std::logic_error("task_target: not a scalar task");
  return math->target(length, n_ones);
}

std::vector<double> task_target_values(TaskKind task, int l_min, int l_max) {
  if (l_min < 1) throw UsageError(fmt::format("minimum length must be >= 1 (got {})", l_min));
  if (l_max < l_min) {
    throw UsageError(fmt::format("maximum length {} is below the minimum length {}", l_max, l_min));
  }
  const ScalarTaskMath* math = task_info(task).scalar;
  if (!math) throw std::logic_error("task_target_values: not a scalar task");
  return math->target_values(l_min, l_max);
}

void check_batch_size(int64_t worst_tokens, int n_seq, int max_length) {
  if (worst_tokens > std::numeric_limits<int32_t>::max()) {
    throw UsageError(fmt::format(
        "batch of {} sequences of length up to {} is too large ({} tokens; the limit is {})", n_seq,
        max_length, worst_tokens, std::numeric_limits<int32_t>::max()));
  }
}

}  // namespace lenlab
