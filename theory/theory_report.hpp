#pragma once
// Everything `lenlab theory` computes for one setting: per test length, the paper's Γ form, the
// exact optima of the linear-attention model (head size d >= 2 and d = 1), and optionally the
// measured error of trained transformers; plus power-law fits of each curve past l_train.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tasks/task.hpp"
#include "theory/exact_optimum.hpp"
#include "theory/measured_runs.hpp"
#include "theory/paper_closed_form.hpp"
#include "theory/power_law.hpp"
#include "theory/token_layout.hpp"

namespace lenlab {

// As the user writes it (CLI flags); validated by compute_theory.
struct TheoryOptions {
  std::string task = "length";
  int l_train = 10;
  int l_test = 50;
  std::string reparam = "identity";
  std::string reparam_inverse;  // empty: closed form for built-ins, numerical for expressions
  double reparam_shift = 0;
  std::string tokens = "none";  // token layout: none, bos, eos or bos,eos
  std::string runs;             // folder to search for runs; empty: no measured column
  std::string pe;               // only runs with this positional encoding; empty: any
};

inline constexpr int kTheoryMaxLTrain = 1000;  // the training table has ~l_train^2 rows
inline constexpr int kTheoryMaxLTest = 10000;  // each test length costs O(l)

struct TheoryRow {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  int length = 0;
  bool in_train = false;  // length <= l_train
  double mean_target = 0;
  // Prediction = E[f^-1(g)] at this length; mse = E[(f^-1(g) - y)^2]. NaN where not available.
  double paper_prediction = kNaN, paper_mse = kNaN;
  double optimum_prediction = 0, optimum_mse = 0;  // d >= 2: any products matrix
  double scalar_prediction = 0, scalar_mse = 0;    // d = 1: rank-one products
  double runs_mse = kNaN;                          // mean over matching runs
  int runs_n = 0;                                  // runs reporting this length
};

struct TheoryReport {
  TheoryOptions options;
  TaskKind task = TaskKind::kLength;
  TokenLayout layout = TokenLayout::kNone;
  std::optional<GammaForm> paper;  // only for layout none
  AttentionOptimum optimum;        // d >= 2
  AttentionOptimum scalar;         // d = 1
  std::vector<TheoryRow> rows;     // lengths 1..l_test
  std::optional<MeasuredErrors> measured;
  // c (l - a)^p fitted (a too) to each mse curve at lengths > l_train; !ok() when unavailable
  // (no such lengths, or an error that is exactly 0).
  PowerLawFit paper_fit, optimum_fit, scalar_fit, runs_fit;
};

// Throws UsageError on bad options: unknown task or token layout, l_train outside
// 1..kTheoryMaxLTrain, l_test below l_train or above kTheoryMaxLTest, a bad reparam or one that is
// not finite and monotone on the task's targets, a --runs path that is not a folder.
TheoryReport compute_theory(const TheoryOptions& options);

// One row per test length: length,in_train,mean_target,paper_prediction,paper_mse,
// optimum_prediction,optimum_mse,scalar_prediction,scalar_mse,runs_mse,runs_n. Unavailable
// values are empty cells; infinite ones "inf".
std::string theory_csv(const TheoryReport& report);

}  // namespace lenlab
