#include "lab/misalignment_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

// A coefficient as the table shows it; NaN (fewer than 3 runs, a constant side) is no number.
std::string coefficient(double r) {
  return std::isfinite(r) ? fmt::format("{:.2f}", r) : "undefined";
}

}  // namespace

std::string misalignment_section(const FigureSummary& fig) {
  const MisalignmentScatter& sc = fig.scatter;
  const std::string& metric_name = fig.spec->metric;
  const std::string metric = metric_label(metric_name);
  if (sc.points.empty())
    return fmt::format(
        "No completed run with a misalignment value and a result at length {}: nothing to "
        "correlate.\n",
        sc.at_length);
  const size_t n = sc.points.size();
  std::string out = fmt::format(
      "Each of {} runs is a point: its {} at length {} against two predictors measured at its "
      "training length l_train. Across runs:\n\n"
      "| predictor | Pearson r | Spearman ρ | n |\n|---|---|---|---|\n"
      "| long-short misalignment at l_train | {} | {} | {} |\n",
      n, metric, sc.at_length, coefficient(sc.pearson_misalignment),
      coefficient(sc.spearman_misalignment), n);
  if (sc.n_train > 0)
    out += fmt::format("| {} at l_train | {} | {} | {} |\n", metric, coefficient(sc.pearson_train),
                       coefficient(sc.spearman_train), sc.n_train);
  out += "\n";
  if (sc.without_far > 0)
    out += fmt::format("{} run(s) with a misalignment have no result at length {}: left out.\n\n",
                       sc.without_far, sc.at_length);
  if (sc.n_train == 0)
    return out +
           "No run was tested at its training length, so the metric there is no predictor here "
           "(add l_train to the runs' test lengths to compare the two).\n";
  if (sc.n_train < static_cast<int>(n))
    out += fmt::format(
        "Only {} of the {} runs were tested at their training length: the second row is over "
        "those.\n\n",
        sc.n_train, n);
  const double a = std::abs(sc.pearson_misalignment), b = std::abs(sc.pearson_train);
  if (!std::isfinite(a) || !std::isfinite(b))
    return out +
           "A coefficient is undefined (fewer than 3 runs, or a predictor or the metric the same "
           "in every run): the two predictors cannot be compared.\n";
  // Which way is "worse" depends on the metric: accuracies fall, losses rise.
  const bool higher_is_better = metric_is_fraction(metric_name);
  const bool more_misaligned_worse = (sc.pearson_misalignment > 0) != higher_is_better;
  const std::string which =
      a == b ? fmt::format(
                   "neither predictor predicts the {} at length {} better (|r| = {:.2f} "
                   "both)",
                   metric, sc.at_length, a)
      : a > b ? fmt::format(
                    "the misalignment predicts the {} at length {} better (|r| {:.2f} "
                    "against {:.2f})",
                    metric, sc.at_length, a, b)
              : fmt::format(
                    "the {} at l_train predicts the {} at length {} better (|r| {:.2f} "
                    "against {:.2f})",
                    metric, metric, sc.at_length, b, a);
  out += fmt::format(
      "By |r|, {}; runs with more misalignment did {} there. A correlation across runs is not a "
      "cause: it says which number to watch, not what to change.\n",
      which, more_misaligned_worse ? "worse" : "better");
  return out;
}

}  // namespace lenlab
