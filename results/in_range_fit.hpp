#pragma once
// The learned-in-range gate: a run enters a verdict about extrapolation only if it fits its own
// training range, by its task's rule (written down once, here):
//   scalar tasks   in-range MSE ≤ 1 % of the target's variance over the training distribution
//                  (tasks/target_variance.hpp): the model explains 99 % of what varies;
//   markov         in-range excess cross-entropy ≤ 0.01 nats (its floor is known exactly);
//   text           no rule: real text has no known floor, so its runs are not gated (unchecked);
//   other tokens   in-range token accuracy ≥ 0.99 (every answer row of the study's score).
// "In range": the test lengths inside the training lengths (train/run_settings.hpp's
// training_lengths), averaged with equal weight per result row (passkey: per (length, depth) cell).
#include <optional>
#include <string>
#include <vector>

#include "results/run_record.hpp"

namespace lenlab {

inline constexpr double kFitVarianceFraction = 0.01;
inline constexpr double kFitExcessCrossEntropy = 0.01;  // nats
inline constexpr double kFitTokenAccuracy = 0.99;

struct InRangeRule {
  std::string metric;  // "mse", "excess_ce", "token_accuracy"; "" where the task has no rule
  double threshold = 0;
  bool at_least = false;  // the metric must be ≥ threshold (accuracy), else ≤ (errors)
  int lo = 1, hi = 1;     // the training lengths
  // "token accuracy ≥ 0.99 inside 1..40", "MSE ≤ 0.0133 (1 % of the target's variance) inside
  // 1..20", or why there is none.
  std::string text() const;
};

InRangeRule in_range_rule(const TrainSpec& spec);

enum class FitState { kFits, kDoesNotFit, kUnchecked };

struct InRangeFit {
  FitState state = FitState::kUnchecked;
  double value = 0;  // the run's metric over the training lengths (when checked)
  InRangeRule rule;
  bool enters() const { return state != FitState::kDoesNotFit; }
};

// The rule's metric averaged with equal weight over the rows inside its training lengths; nullopt
// when the task has no rule or no row is inside.
std::optional<double> in_range_value(const std::vector<LengthResult>& rows,
                                     const InRangeRule& rule);

// Unchecked when the task has no rule or the run has no result row inside its training lengths.
InRangeFit in_range_fit(const RunRecord& run);

// How many of `runs` fit (kFits) and how many were checked (not kUnchecked).
struct FitCount {
  int fit = 0, checked = 0;
};
FitCount count_fits(const std::vector<const RunRecord*>& runs);

}  // namespace lenlab
