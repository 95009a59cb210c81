#include "report/misalignment_report.hpp"

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

// A coefficient with its bootstrap interval, e.g. "0.52 [0.20, 0.75]".
std::string with_interval(double r, const Interval& ci) {
  if (!std::isfinite(r)) return "undefined";
  if (!std::isfinite(ci.lo) || !std::isfinite(ci.hi)) return coefficient(r);
  return fmt::format("{:.2f} [{:.2f}, {:.2f}]", r, ci.lo, ci.hi);
}

// Markov: the SCE of each line split into its parts, beside a perfect model's, means over the
// line's points (paper 000's eq. 1 is the divergence plus both outputs' entropies).
std::string decomposition_table(const FigureSummary& fig, const std::string& metric) {
  const MisalignmentScatter& sc = fig.scatter;
  struct Sums {
    int n = 0;
    double sce = 0, divergence = 0, entropy = 0, perfect = 0, far = 0;
  };
  std::vector<Sums> by_line(fig.lines.size());
  for (const MisalignmentPoint& p : sc.points) {
    if (std::isnan(p.divergence) || !p.run->misalignment_entropy || !p.run->misalignment_perfect)
      continue;
    Sums& s = by_line[p.line];
    ++s.n;
    s.sce += p.misalignment;
    s.divergence += p.divergence;
    s.entropy += *p.run->misalignment_entropy;
    s.perfect += *p.run->misalignment_perfect;
    s.far += p.far;
  }
  std::string rows;
  double min_perfect = INFINITY, max_perfect = -INFINITY, max_share = 0, min_share = 1;
  for (size_t line = 0; line < fig.lines.size(); ++line) {
    const Sums& s = by_line[line];
    if (s.n == 0) continue;
    const double n = s.n;
    rows += fmt::format("| {} | {} | {:.4f} | {:.4f} | {:.4f} | {:.4f} | {:.4g} |\n",
                        fig.lines[line].label, s.n, s.sce / n, s.divergence / n, s.entropy / n,
                        s.perfect / n, s.far / n);
    min_perfect = std::min(min_perfect, s.perfect / n);
    max_perfect = std::max(max_perfect, s.perfect / n);
    const double share = s.sce > 0 ? s.divergence / s.sce : 0;
    max_share = std::max(max_share, share);
    min_share = std::min(min_share, share);
  }
  if (rows.empty()) return "";
  return fmt::format(
      "The misalignment (SCE, paper 000's eq. 1) is the symmetric KL divergence of the two "
      "outputs plus their two entropies; SCE(p, p) = 2H(p), not 0. Per line, means over its "
      "runs (nats), beside what a perfect model of the chain gives on the same pairs:\n\n"
      "| line | runs | SCE | divergence | entropies | perfect model's SCE | {} at length {} "
      "|\n|---|---|---|---|---|---|---|\n{}\n"
      "The divergence is {:.1f}–{:.1f} % of the SCE across lines; a perfect model's SCE is "
      "{:.4f}{}, all of it entropy (its divergence is 0). So most of the SCE measures how "
      "uncertain the next symbol is, which no model can remove, not how far the two views "
      "disagree.\n\n",
      metric, sc.at_length, rows, 100 * min_share, 100 * max_share, min_perfect,
      max_perfect > min_perfect + 5e-5 ? fmt::format("–{:.4f}", max_perfect) : "");
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
      "Each of {} runs is a point: its {} at length {} against predictors measured at its "
      "training length l_train. Across runs, with 95% percentile-bootstrap intervals over the "
      "runs (2000 resamples):\n\n"
      "| predictor | Pearson r | Spearman ρ | n |\n|---|---|---|---|\n"
      "| long-short misalignment at l_train | {} | {} | {} |\n",
      n, metric, sc.at_length, with_interval(sc.pearson_misalignment, sc.pearson_misalignment_ci),
      with_interval(sc.spearman_misalignment, sc.spearman_misalignment_ci), n);
  if (sc.n_divergence > 0)
    out += fmt::format("| its divergence part (symmetric KL) | {} | {} | {} |\n",
                       with_interval(sc.pearson_divergence, sc.pearson_divergence_ci),
                       with_interval(sc.spearman_divergence, sc.spearman_divergence_ci),
                       sc.n_divergence);
  if (sc.n_train > 0)
    out += fmt::format("| {} at l_train | {} | {} | {} |\n", metric,
                       with_interval(sc.pearson_train, sc.pearson_train_ci),
                       with_interval(sc.spearman_train, sc.spearman_train_ci), sc.n_train);
  out += "\n";
  if (sc.n_divergence > 0) {
    out += decomposition_table(fig, metric);
    const double s = std::abs(sc.pearson_misalignment), d = std::abs(sc.pearson_divergence);
    if (std::isfinite(s) && std::isfinite(d)) {
      // Overlapping intervals: the data cannot tell the two predictors apart.
      const Interval &a = sc.pearson_misalignment_ci, &b = sc.pearson_divergence_ci;
      const bool overlap = !(a.hi < b.lo || b.hi < a.lo);
      out += fmt::format(
          "By |r|, the {} predicts the {} at length {} better ({:.2f} against {:.2f}){}.\n\n",
          d > s ? "divergence part alone" : "SCE (divergence and entropies together)", metric,
          sc.at_length, std::max(s, d), std::min(s, d),
          overlap ? ", but their intervals overlap: these runs cannot tell the two apart"
                  : "; their intervals do not overlap");
    }
  }
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
