#include "report/temperature_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "results/figure_metric.hpp"
#include "train/inference_attention.hpp"

namespace lenlab {

namespace {

// The mean of the finite values, and how many there were.
std::string mean_of(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) sum += x, ++n;
  if (n == 0) return "none";
  return n == static_cast<int>(v.size()) ? fmt::format("{:.3g}", sum / n)
                                         : fmt::format("{:.3g} ({} of {})", sum / n, n, v.size());
}

std::vector<double> values_at(const std::vector<const RunRecord*>& runs,
                              std::map<int, double> RunRecord::*field, int length) {
  std::vector<double> out;
  for (const RunRecord* r : runs) {
    const auto it = (r->*field).find(length);
    if (it != (r->*field).end()) out.push_back(it->second);
  }
  return out;
}

// "low 2/3" / "high 1/3" / "—": in how many seeds the searched τ sat at a bound of the grid.
std::string bound_cell(const std::vector<const RunRecord*>& runs, int length) {
  int low = 0, high = 0, n = 0;
  for (const RunRecord* r : runs) {
    if (!r->temperature_by_length.count(length)) continue;
    ++n;
    const auto it = r->temperature_at_bound.find(length);
    if (it == r->temperature_at_bound.end()) continue;
    low += it->second == "low";
    high += it->second == "high";
  }
  std::string out;
  if (low) out += fmt::format("low {}/{}", low, n);
  if (high) out += fmt::format("{}high {}/{}", out.empty() ? "" : ", ", high, n);
  return out.empty() ? "—" : out;
}

std::string number(double x) {
  return std::isfinite(x) ? fmt::format("{:.3g}", x) : "—";
}

// plot "temperature": per line and length, each criterion's τ and the metric there beside the
// grid's best τ and τ = 1; then, per criterion, how often it beat τ = 1 and its mean gap to the
// best.
std::string curve_section(const FigureSummary& fig) {
  const std::string& metric = fig.spec->metric;
  // Attention statistics have no better direction: no best τ for them.
  const bool ranked = !is_attention_metric(metric);
  const bool higher_better = metric_is_fraction(metric);
  std::string head = "| line | length | value at τ = 1 |";
  std::string rule = "|---|---|---|";
  if (ranked) head += " best τ on the grid (value) |", rule += "---|";
  for (const std::string& c : temperature_criteria())
    head += fmt::format(" {}: τ (value) |", temperature_criterion_label(c)), rule += "---|";
  head += " evaluated τ at a bound |\n";
  rule += "---|\n";
  std::string rows;
  std::map<std::string, int> better, compared;
  std::map<std::string, double> gap;
  int n_curves = 0, low_bound = 0, seeds_at_length = 0;
  for (const FigureLine& line : fig.lines)
    for (const TemperatureCurve& c : line.temperature) {
      if (c.tau.empty()) continue;
      ++n_curves;
      low_bound += c.at_low_bound;
      seeds_at_length += c.runs;
      const double plain = c.tau.front() == 1.0 ? c.value_mean.front() : NAN;
      size_t best = 0;
      for (size_t i = 1; i < c.tau.size(); ++i)
        if (higher_better ? c.value_mean[i] > c.value_mean[best]
                          : c.value_mean[i] < c.value_mean[best])
          best = i;
      rows += fmt::format("| {} | {} | {} |", line.label, c.length, number(plain));
      if (ranked)
        rows += fmt::format(" {} ({}) |", number(c.tau[best]), number(c.value_mean[best]));
      for (const std::string& criterion : temperature_criteria()) {
        const double tau = c.chosen.at(criterion);
        const double v = temperature_curve_at(c, tau);
        rows += std::isfinite(tau) && !std::isfinite(v)
                    ? fmt::format(" {} (off the grid) |", number(tau))
                    : fmt::format(" {} ({}) |", number(tau), number(v));
        if (!ranked || !std::isfinite(v) || !std::isfinite(plain)) continue;
        ++compared[criterion];
        better[criterion] += higher_better ? v > plain : v < plain;
        gap[criterion] += std::abs(v - c.value_mean[best]);
      }
      std::string bound;
      if (c.at_low_bound) bound += fmt::format("low {}/{}", c.at_low_bound, c.runs);
      if (c.at_high_bound)
        bound += fmt::format("{}high {}/{}", bound.empty() ? "" : ", ", c.at_high_bound, c.runs);
      rows += fmt::format(" {} |\n", bound.empty() ? std::string("—") : bound);
    }
  if (n_curves == 0) return "No run of this figure has a temperature search's curve.\n";
  std::string out = fmt::format(
      "The {} against the attention temperature τ at each length past l_train, on the search's "
      "first {} test sequences of each length (means over seeds), and the τ each criterion "
      "chose (Algorithm 1 by each statistic, grid values; Propositions 1 and 2 and the log rule "
      "log L_train / log L, any value: the curve is interpolated there, and a τ outside the grid "
      "has no value):\n\n",
      metric_label(metric), kTemperatureSearchSamples);
  out += head + rule + rows;
  if (ranked) {
    out += "\nPer criterion, over the lengths where its τ lies on the grid: ";
    std::vector<std::string> parts;
    for (const std::string& criterion : temperature_criteria())
      if (compared[criterion])
        parts.push_back(fmt::format("{} beat τ = 1 at {} of {}, {} from the grid's best on average",
                                    temperature_criterion_label(criterion), better[criterion],
                                    compared[criterion],
                                    number(gap[criterion] / compared[criterion])));
      else
        parts.push_back(
            fmt::format("{}: never on the grid", temperature_criterion_label(criterion)));
    for (size_t i = 0; i < parts.size(); ++i)
      out += fmt::format("{}{}", i ? i + 1 == parts.size() ? "; and " : "; " : "", parts[i]);
    out += ".\n";
  }
  if (low_bound > 0)
    out += fmt::format(
        "\nThe evaluated τ sat at the grid's lowest value in {} of {} (length, seed) searches: "
        "the best match may lie below it; lower temperature_min to see.\n",
        low_bound, seeds_at_length);
  return out;
}

}  // namespace

std::string temperature_section(const FigureSummary& fig) {
  if (fig.spec->plot == "temperature") return fmt::format("\n{}", curve_section(fig));
  std::string rows;
  for (const FigureLine& line : fig.lines) {
    std::set<int> lengths;
    for (const RunRecord* r : line.runs)
      for (const auto& [length, tau] : r->temperature_by_length) lengths.insert(length);
    for (const int length : lengths) {
      const std::vector<double> searched =
          values_at(line.runs, &RunRecord::temperature_by_length, length);
      const auto [lo, hi] = std::minmax_element(searched.begin(), searched.end());
      rows += fmt::format(
          "| {} | {} | {} | {:.3g}–{:.3g} | {} | {} | {} |\n", line.label, length,
          mean_of(searched), *lo, *hi,
          mean_of(values_at(line.runs, &RunRecord::temperature_pmax_closed_form, length)),
          mean_of(values_at(line.runs, &RunRecord::temperature_entropy_closed_form, length)),
          bound_cell(line.runs, length));
    }
  }
  if (rows.empty()) return "";
  return "\nThe attention temperatures chosen past l_train: paper 002's Algorithm 1 (on the grid "
         "from 1 to temperature_min, by default 1.0, 0.95, …, 0.5; the one evaluated; *at a "
         "bound*: in how many seeds it chose the grid's lowest or highest τ, where the best "
         "match may lie outside the grid), and its closed forms from layer 0's logits "
         "(Proposition 1: max-probability alignment; Proposition 2: entropy alignment; docs/"
         "methods.md), means over seeds:\n\n"
         "| line | length | Algorithm 1 | its range | Proposition 1 | Proposition 2 | at a bound "
         "|\n"
         "|---|---|---|---|---|---|---|\n" +
         rows;
}

}  // namespace lenlab
