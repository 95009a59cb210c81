#include "lab/temperature_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

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

}  // namespace

std::string temperature_section(const FigureSummary& fig) {
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
          "| {} | {} | {} | {:.3g}–{:.3g} | {} | {} |\n", line.label, length, mean_of(searched),
          *lo, *hi, mean_of(values_at(line.runs, &RunRecord::temperature_pmax_closed_form, length)),
          mean_of(values_at(line.runs, &RunRecord::temperature_entropy_closed_form, length)));
    }
  }
  if (rows.empty()) return "";
  return "\nThe attention temperatures chosen past l_train: paper 002's Algorithm 1 (the grid "
         "1.0, 0.95, …, 0.5; the one evaluated), and its closed forms from layer 0's logits "
         "(Proposition 1: max-probability alignment; Proposition 2: entropy alignment; docs/"
         "methods.md), means over seeds:\n\n"
         "| line | length | Algorithm 1 | its range | Proposition 1 | Proposition 2 |\n"
         "|---|---|---|---|---|---|\n" +
         rows;
}

}  // namespace lenlab
