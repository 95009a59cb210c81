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

std::optional<double> in_range_value(const std::vector<LengthResult>& rows,
                                     const InRangeRule& rule) {
  if (rule.metric.empty()) return std::nullopt;
  double sum = 0;
  int n = 0;
  for (const LengthResult& row : rows)
    if (row.length >= rule.lo && row.length <= rule.hi) {
      sum += metric_value(row, rule.metric);
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

InRangeFit in_range_fit(const RunRecord& run) {
  InRangeFit fit;
  fit.rule = in_range_rule(run.spec);
  const std::optional<double> value = in_range_value(run.results, fit.rule);
  if (!value) return fit;
  fit.value = *value;
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
