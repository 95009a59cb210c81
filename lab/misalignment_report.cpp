#include "lab/misalignment_report.hpp"

#include <fmt/format.h>

#include <cmath>

#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

std::string coefficient(double r) {
  return std::isfinite(r) ? fmt::format("{:.2f}", r) : "undefined";
}

}  // namespace

std::string misalignment_section(const FigureSummary& fig) {
  const MisalignmentScatter& sc = fig.scatter;
  const std::string metric = metric_label(fig.spec->metric);
  if (sc.points.empty())
    return "No completed run with a misalignment value: nothing to correlate.\n";
  std::string out = fmt::format(
      "Each of {} runs is a point: its {} at length {} (the longest length every run was tested "
      "at) against two predictors measured at the training length. Across runs:\n\n"
      "| predictor | Pearson r | Spearman ρ | runs |\n|---|---|---|---|\n"
      "| long-short misalignment at l_train | {} | {} | {} |\n",
      sc.points.size(), metric, sc.at_length, coefficient(sc.pearson_misalignment),
      coefficient(sc.spearman_misalignment), sc.points.size());
  if (sc.n_train > 0)
    out += fmt::format("| {} at l_train | {} | {} | {} |\n", metric, coefficient(sc.pearson_train),
                       coefficient(sc.spearman_train), sc.n_train);
  out += "\n";
  if (sc.n_train == 0) {
    out +=
        "The runs were not tested at their training length, so the metric there cannot be "
        "compared.\n";
    return out;
  }
  const double a = std::abs(sc.pearson_misalignment), b = std::abs(sc.pearson_train);
  if (!std::isfinite(a) || !std::isfinite(b))
    out +=
        "One coefficient is undefined (too few runs, or a constant predictor): no "
        "comparison.\n";
  else
    out += fmt::format(
        "By |r|, {} predicts the {} at length {} better ({:.2f} against {:.2f}){}. A correlation "
        "across runs is not a cause: it says which number to watch, not what to change.\n",
        a > b ? "the misalignment" : fmt::format("the {} at l_train", metric), metric, sc.at_length,
        std::max(a, b), std::min(a, b),
        sc.pearson_misalignment < 0 ? "; note the misalignment's sign is negative: runs with "
                                      "more misalignment did better there"
                                    : "");
  return out;
}

}  // namespace lenlab
