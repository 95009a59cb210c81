#include "results/in_range_fit.hpp"

#include <fmt/format.h>

#include "results/figure_metric.hpp"
#include "tasks/target_variance.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

std::string InRangeRule::text() const {
  if (metric.empty()) return "no in-range rule for this task (real text has no known floor)";
  const std::string range = fmt::format("inside {}..{}", lo, hi);
  if (metric == "mse")
    return fmt::format("MSE ≤ {:.3g} (1 % of the target's variance) {}", threshold, range);
  return fmt::format("{} {} {} {}", metric_label(metric), at_least ? "≥" : "≤", threshold, range);
}

InRangeRule in_range_rule(const TrainSpec& spec) {
  InRangeRule rule;
  const LengthRange lengths = training_lengths(spec);
  rule.lo = lengths.lo;
  rule.hi = lengths.hi;
  const TaskKind task = parse_task(spec.task);
  if (task_info(task).scalar) {
    rule.metric = "mse";
    rule.threshold = kFitVarianceFraction * target_variance(task, lengths.lo, lengths.hi);
  } else if (task == TaskKind::kMarkov) {
    rule.metric = "excess_ce";
    rule.threshold = kFitExcessCrossEntropy;
  } else if (task != TaskKind::kText) {
    rule.metric = "token_accuracy";
    rule.threshold = kFitTokenAccuracy;
    rule.at_least = true;
  }
  return rule;
}

InRangeFit in_range_fit(const RunRecord& run) {
  InRangeFit fit;
  fit.rule = in_range_rule(run.spec);
  if (fit.rule.metric.empty()) return fit;
  double sum = 0;
  int n = 0;
  for (const LengthResult& row : run.results)
    if (row.length >= fit.rule.lo && row.length <= fit.rule.hi) {
      sum += metric_value(row, fit.rule.metric);
      ++n;
    }
  if (n == 0) return fit;
  fit.value = sum / n;
  const bool ok =
      fit.rule.at_least ? fit.value >= fit.rule.threshold : fit.value <= fit.rule.threshold;
  fit.state = ok ? FitState::kFits : FitState::kDoesNotFit;
  return fit;
}

FitCount count_fits(const std::vector<const RunRecord*>& runs) {
  FitCount c;
  for (const RunRecord* r : runs) {
    const FitState state = in_range_fit(*r).state;
    c.fit += state == FitState::kFits;
    c.checked += state != FitState::kUnchecked;
  }
  return c;
}

}  // namespace lenlab
