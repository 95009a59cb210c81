#pragma once
// The synthetic tasks. Every sequence is [BOS, b_1 .. b_l, EOS] with bits b_i; the task decides how
// the bits are drawn and which scalar target y the model must predict from them:
//   mean:         y = #ones / l,  b_i ~ Bernoulli(1/2)
//   length:       y = l,          b_i ~ Bernoulli(1/2)
//   sum:          y = #ones,      b_i ~ Bernoulli(1/2)
//   mean-uniform: y = #ones / l,  #ones ~ Uniform{0..l}, ones at uniformly random positions
//                 (paper, Appendix F: every value of the mean is equally likely).
// All randomness comes from Rng, so a seed gives identical data on every platform.
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "tasks/batch.hpp"

namespace lenlab {

// The first four are the scalar tasks above (one real number read at EOS); the rest are token
// tasks (tasks/token_tasks.hpp: next-token prediction on their answer rows). A task's family, and
// everything else about it, is its row's (TaskInfo below), never its place in this list.
enum class TaskKind {
  kMean,
  kLength,
  kSum,
  kMeanUniform,
  kPasskey,
  kRecall,
  kCopy,
  kReverse,
  kParity,
  kMarkov,
  kEvenPairs,
  kCycleNavigation,
  kModularArithmetic,
  kStackManipulation,
  kModularArithmeticBrackets,
  kSolveEquation,
  kDuplicateString,
  kMissingDuplicateString,
  kOddsFirst,
  kBinaryAddition,
  kBinaryMultiplication,
  kComputeSqrt,
  kBucketSort,
  kText
};

struct ScalarTaskMath;  // tasks/scalar_tasks.cpp
struct TokenTaskMath;   // tasks/token_task_math.hpp

// The one table of tasks (tasks/task.cpp): a row per task, its name, what it is and what it
// computes. The CLI's choices, configs, the reports and the figures read it; the generators and
// the cost model read its math. A new task is its enumerator above, its row and its math.
struct TaskInfo {
  TaskKind kind;
  const char* name;
  // The Chomsky-hierarchy study's level of its 15 tasks (Delétang et al. 2023): "regular",
  // "deterministic context-free" or "context-sensitive"; "" for lenlab's other tasks.
  const char* level = "";
  // What its figures show by default (results/figure_metric.hpp): "mse", "token_accuracy",
  // "excess_ce" or "perplexity"; and the metrics it has beyond its family's, comma-separated.
  const char* metric = "token_accuracy";
  const char* extra_metrics = "";
  // The long-short misalignment measure (train/misalignment.hpp) applies: the scalar tasks, and
  // markov, whose every row answers from a known distribution.
  bool misalignment = false;
  // What it computes: exactly one of them (a scalar task's target, a token task's sequences).
  const ScalarTaskMath* scalar = nullptr;
  const TokenTaskMath* token = nullptr;
};

const std::vector<TaskInfo>& task_table();  // in the order of TaskKind
const TaskInfo& task_info(TaskKind task);

inline bool is_token_task(TaskKind task) {
  return task_info(task).token != nullptr;
}

// A task's name (its row's); anything else throws UsageError listing the choices.
TaskKind parse_task(const std::string& name);
std::string task_name(TaskKind task);
std::vector<std::string> task_names();  // in the order of TaskKind
// The scalar tasks only: parse_task's, but a token task's name is refused too, naming the four.
TaskKind parse_scalar_task(const std::string& name);
std::vector<std::string> scalar_task_names();

// The task's vocabulary size (the model's embedding rows): {0, 1, BOS, EOS} for these tasks.
inline int task_vocab_size(TaskKind) {
  return kVocabSize;
}

// The target of a sequence of `length` bits with `n_ones` ones (0 <= n_ones <= length); scalar
// tasks only (this and the functions below throw std::logic_error for a token task; their math is
// tasks/scalar_tasks.cpp's).
double task_target(TaskKind task, int length, int n_ones);

// Every value the target takes over lengths l_min..l_max (sorted ascending, unique); used to check
// that a target reparameterization is finite and monotone where it will be applied.
std::vector<double> task_target_values(TaskKind task, int l_min, int l_max);

// Training batch: n_seq fresh sequences, each of length uniform in l_min..l_train, drawn from rng
// (the same draws as 1..l_train when l_min is 1). weights is left empty (equal weights).
Batch sample_train_batch(TaskKind task, int l_train, int n_seq, Rng& rng, int l_min = 1);

// Evaluation set for one length, fixed by (task, length, n_samples, eval_seed) so that runs are
// comparable:
// - when 2^length <= n_samples: all 2^length sequences, enumerated in binary order (sequence i has
//   b_j = bit j-1 of i), with weights = each sequence's probability under the task's distribution
//   (2^-l, or 1/((l+1) C(l,k)) for mean-uniform with k ones), summing to 1;
// - otherwise: n_samples sequences drawn from Rng::stream(eval_seed, length), weights empty.
Batch eval_batch(TaskKind task, int length, int n_samples, uint64_t eval_seed);

// True when eval_batch(task, length, n_samples, ...) enumerates instead of sampling.
bool eval_enumerates(int length, int n_samples);

// Offsets are int32, so a batch holds at most INT32_MAX tokens: UsageError naming the batch when
// `worst_tokens` (an upper bound of its tokens) is more.
void check_batch_size(int64_t worst_tokens, int n_seq, int max_length);

}  // namespace lenlab
