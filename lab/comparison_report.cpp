#include "lab/comparison_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

std::string num(double x) {
  return std::isnan(x) ? "—" : fmt::format("{:.3g}", x);
}

}  // namespace

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
      "it. — : the method does not apply to the task, or has no completed run. The figure: each "
      "method's factor over its task's baseline.\n\n![figure compare](compare.png)\n\n| method |");
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
