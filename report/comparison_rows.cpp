#include "report/comparison_rows.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "report/comparison_verdicts.hpp"

namespace lenlab {

namespace {

constexpr double kNoNumber = std::numeric_limits<double>::quiet_NaN();

const FigureLine* figure_line_named(const FigureSummary& fig, const std::string& label) {
  for (const FigureLine& l : fig.lines)
    if (l.label == label) return &l;
  return nullptr;
}

}  // namespace

std::vector<ComparisonRow> comparison_rows(const std::vector<FigureSummary>& figures) {
  std::vector<ComparisonRow> rows;
  for (const Comparison& c : judge_comparisons(figures)) {
    const FigureSpec& spec = *c.fig->spec;
    for (size_t i = 0; i < c.lines.size(); ++i) {
      const ComparedLine& l = c.lines[i];
      ComparisonRow r;
      r.figure = spec.name;
      const FigureLine* line = figure_line_named(*c.fig, l.label);
      const TrainSpec& s = line ? line->spec : spec.base;
      r.task = s.task;
      r.pe = s.pe;
      r.metric = spec.metric;
      r.range = c.range.label();
      r.lo = c.range.lo;
      r.hi = c.range.hi;
      r.main = c.main;
      r.method = l.label;
      r.baseline = spec.baseline;
      r.is_baseline = l.label == spec.baseline;
      r.n_seeds = l.n_seeds;
      r.mean = l.mean;
      r.min = l.min;
      r.max = l.max;
      r.rank = l.rank;
      r.seeds_better = l.seeds_better;
      r.seeds_paired = l.seeds_paired;
      const PairedComparison* p = l.paired ? &*l.paired : nullptr;
      r.mean_difference = p ? p->mean_difference : kNoNumber;
      r.interval_low = p ? p->interval_low : kNoNumber;
      r.interval_high = p ? p->interval_high : kNoNumber;
      r.median_difference = p ? p->median_difference : kNoNumber;
      r.p_sign = p ? p->p_sign : kNoNumber;
      r.p_wilcoxon = p ? p->p_wilcoxon : kNoNumber;
      r.p_adjusted = c.adjusted_p[i];
      r.smallest_detectable = p ? p->smallest_detectable : kNoNumber;
      r.verdict = r.is_baseline ? "baseline" : verdict_name(c.words[i]);
      r.reason = r.is_baseline || c.words[i] != VerdictWord::kNotJudged ? "" : not_judged_reason(l);
      r.seeds_not_fit = fmt::format("{}", fmt::join(l.seeds_not_fit, ", "));
      r.in_range_rule = l.in_range_rule;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace lenlab
