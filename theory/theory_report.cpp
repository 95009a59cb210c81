// `lenlab theory`'s numbers: validation, the three model curves, measured runs, fits, CSV.
#include "theory/theory_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "reparam/reparam.hpp"
#include "theory/linear_attention.hpp"
#include "theory/training_objective.hpp"

namespace lenlab {
namespace {

void check_lengths(const TheoryOptions& o) {
  if (o.l_train < 1 || o.l_train > kTheoryMaxLTrain)
    throw UsageError(
        fmt::format("--l-train must be in 1..{}, got {}", kTheoryMaxLTrain, o.l_train));
  if (o.l_test < o.l_train)
    throw UsageError(
        fmt::format("--l-test ({}) must be at least --l-train ({})", o.l_test, o.l_train));
  if (o.l_test > kTheoryMaxLTest)
    throw UsageError(fmt::format("--l-test must be at most {}, got {}", kTheoryMaxLTest, o.l_test));
}

// Fit of one mse column at lengths > l_train. An error below 1e-20 E[y]^2 is rounding noise of an
// exact fit (mean task): it counts as 0, which has no logarithm and so is left out.
PowerLawFit fit_beyond(const std::vector<TheoryRow>& rows, double TheoryRow::*mse) {
  std::vector<double> l, err;
  for (const TheoryRow& r : rows) {
    if (r.in_train) continue;
    const double noise = 1e-20 * std::max(1.0, r.mean_target * r.mean_target);
    l.push_back(r.length);
    err.push_back(r.*mse <= noise ? 0.0 : r.*mse);
  }
  return fit_power_law(l, err);
}

std::string cell(double v) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.10g}", v);
}

}  // namespace

TheoryReport compute_theory(const TheoryOptions& options) {
  TheoryReport report;
  report.options = options;
  report.task = parse_scalar_task(options.task);
  report.layout = parse_token_layout(options.tokens);
  check_lengths(options);
  Reparam f = Reparam::make(options.reparam, options.reparam_inverse, options.reparam_shift);
  // As in training: f is applied to training targets and inverted on every test prediction.
  f.check_domain(task_target_values(report.task, 1, options.l_test), options.task);

  const TrainingObjective objective(report.task, options.l_train, report.layout, f);
  if (report.layout == TokenLayout::kNone) report.paper = fit_paper_gamma(objective);
  report.optimum = solve_free_products(objective);
  report.scalar = solve_rank_one_products(objective);

  if (!options.runs.empty()) {
    report.measured = average_runs(options.runs, {options.task, options.l_train, options.reparam,
                                                  options.reparam_shift, options.pe});
  }

  for (int l = 1; l <= options.l_test; ++l) {
    TheoryRow row;
    row.length = l;
    row.in_train = l <= options.l_train;
    const LengthError opt = length_error(report.optimum.products, report.layout, report.task, f, l);
    const LengthError sc = length_error(report.scalar.products, report.layout, report.task, f, l);
    row.mean_target = opt.mean_target;
    row.optimum_prediction = opt.mean_prediction, row.optimum_mse = opt.mse;
    row.scalar_prediction = sc.mean_prediction, row.scalar_mse = sc.mse;
    if (report.paper) {
      const LengthError p = length_error(report.paper->products, report.layout, report.task, f, l);
      row.paper_prediction = p.mean_prediction, row.paper_mse = p.mse;
    }
    if (report.measured) {
      const MeasuredErrors& m = *report.measured;  // lengths ascending
      const auto it = std::lower_bound(m.lengths.begin(), m.lengths.end(), l);
      if (it != m.lengths.end() && *it == l) {
        row.runs_mse = m.mean_mse[it - m.lengths.begin()];
        row.runs_n = m.n_runs[it - m.lengths.begin()];
      }
    }
    report.rows.push_back(row);
  }
  report.paper_fit = fit_beyond(report.rows, &TheoryRow::paper_mse);
  report.optimum_fit = fit_beyond(report.rows, &TheoryRow::optimum_mse);
  report.scalar_fit = fit_beyond(report.rows, &TheoryRow::scalar_mse);
  report.runs_fit = fit_beyond(report.rows, &TheoryRow::runs_mse);
  return report;
}

std::string theory_csv(const TheoryReport& report) {
  std::string csv =
      "length,in_train,mean_target,paper_prediction,paper_mse,optimum_prediction,optimum_mse,"
      "scalar_prediction,scalar_mse,runs_mse,runs_n\n";
  for (const TheoryRow& r : report.rows) {
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", r.length, r.in_train ? 1 : 0,
                       cell(r.mean_target), cell(r.paper_prediction), cell(r.paper_mse),
                       cell(r.optimum_prediction), cell(r.optimum_mse), cell(r.scalar_prediction),
                       cell(r.scalar_mse), cell(r.runs_mse),
                       report.measured ? std::to_string(r.runs_n) : "");
  }
  return csv;
}

}  // namespace lenlab
