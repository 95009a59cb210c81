#include "lab/comparison_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double x) {
  return std::isnan(x) ? "—" : fmt::format("{:.3g}", x);
}

// A run's metric averaged over its result rows beyond l_train (passkey: every (length, depth)
// cell, the same depths at every length); NaN when it has none.
double beyond_mean(const RunRecord& r, const std::string& metric) {
  double sum = 0;
  int n = 0;
  for (const LengthResult& row : r.results)
    if (row.length > r.spec.l_train) {
      sum += metric_value(row, metric);
      ++n;
    }
  return n > 0 ? sum / n : kNaN;
}

}  // namespace

std::vector<ComparedLine> compare_lines(const FigureSummary& fig) {
  const std::string& metric = fig.spec->metric;
  const bool higher_better = metric_is_fraction(metric);
  std::vector<ComparedLine> out;
  for (const FigureLine& line : fig.lines) {
    ComparedLine c;
    c.label = line.label;
    c.mean = c.min = c.max = kNaN;
    std::vector<double> v;
    for (const RunRecord* r : line.runs)
      if (const double x = beyond_mean(*r, metric); !std::isnan(x)) v.push_back(x);
    c.n_seeds = static_cast<int>(v.size());
    if (!v.empty()) {
      double sum = 0;
      for (double x : v) sum += x;
      c.mean = sum / static_cast<double>(v.size());
      c.min = *std::min_element(v.begin(), v.end());
      c.max = *std::max_element(v.begin(), v.end());
    }
    out.push_back(c);
  }
  // Ranks by the mean (ties share the better rank).
  for (ComparedLine& c : out) {
    if (c.n_seeds == 0) continue;
    c.rank = 1;
    for (const ComparedLine& o : out)
      if (o.n_seeds > 0 && (higher_better ? o.mean > c.mean : o.mean < c.mean)) ++c.rank;
  }
  const auto base = std::find_if(
      out.begin(), out.end(), [&](const ComparedLine& c) { return c.label == fig.spec->baseline; });
  if (base != out.end() && base->n_seeds > 0)
    for (ComparedLine& c : out) {
      if (c.n_seeds == 0 || &c == &*base) continue;
      const bool above = c.min > base->max, below = c.max < base->min;
      if (above || below) c.versus_baseline = (above == higher_better) ? 1 : -1;
    }
  return out;
}

std::string comparison_section(const std::vector<FigureSummary>& figures) {
  std::vector<const FigureSummary*> compared;
  for (const FigureSummary& f : figures)
    if (!f.spec->baseline.empty()) compared.push_back(&f);
  if (compared.empty()) return "";
  std::vector<std::vector<ComparedLine>> lines;
  std::vector<std::string> labels;  // every figure's lines, in order of first appearance
  for (const FigureSummary* f : compared) {
    lines.push_back(compare_lines(*f));
    for (const ComparedLine& c : lines.back())
      if (std::find(labels.begin(), labels.end(), c.label) == labels.end())
        labels.push_back(c.label);
  }
  std::string out = fmt::format(
      "\n## Method comparison\n\nEach column is a figure that compares methods on one task: each "
      "line's metric averaged over the test lengths beyond l_train, the mean over seeds, and its "
      "rank in the column (1 = best). ▲ / ▼: better / worse than the column's baseline by more "
      "than the seed spread (the seeds' ranges of that average do not overlap); no mark: within "
      "it. — : the method does not apply to the task, or has no completed run.\n\n| method |");
  std::string rule = "|---|";
  for (const FigureSummary* f : compared) {
    const TrainSpec& s = f->lines.empty() ? f->spec->base : f->lines.front().spec;
    out += fmt::format(" {} ({}, {}; {}) |", f->spec->name, s.task, s.pe,
                       metric_label(f->spec->metric));
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const std::string& label : labels) {
    out += "| " + label + " |";
    for (size_t i = 0; i < compared.size(); ++i) {
      const auto c = std::find_if(lines[i].begin(), lines[i].end(),
                                  [&](const ComparedLine& l) { return l.label == label; });
      if (c == lines[i].end() || c->n_seeds == 0) {
        out += " — |";
        continue;
      }
      const char* mark = c->versus_baseline > 0 ? " ▲" : c->versus_baseline < 0 ? " ▼" : "";
      out += fmt::format(" {} ({}){}{} |", num(c->mean), c->rank, mark,
                         label == compared[i]->spec->baseline ? " baseline" : "");
    }
    out += "\n";
  }
  out += "\n";
  for (size_t i = 0; i < compared.size(); ++i) {
    const FigureSummary& f = *compared[i];
    std::string best, better, worse;
    for (const ComparedLine& c : lines[i]) {
      if (c.rank == 1) best += (best.empty() ? "" : ", ") + c.label;
      if (c.versus_baseline > 0) better += (better.empty() ? "" : ", ") + c.label;
      if (c.versus_baseline < 0) worse += (worse.empty() ? "" : ", ") + c.label;
    }
    out += fmt::format(
        "- **{}**: best {}. Better than {} beyond the seed spread: {}. Worse beyond it: {}.\n",
        f.spec->name, best.empty() ? "—" : best, f.spec->baseline, better.empty() ? "none" : better,
        worse.empty() ? "none" : worse);
  }
  return out;
}

}  // namespace lenlab
