#include "lab/comparison_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plots/gnuplot_compare.hpp"
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
      "than the seed spread (the seeds' ranges of that average do not overlap); ≈: within it. "
      "k/n: seed by seed, the method beat the baseline trained with the same seed in k of n "
      "seeds. — : the method does not apply to the task, or has no completed run. {}\n\n"
      "| method |",
      has_compare_bars(compared)
          ? "The figure: each method's factor over its task's baseline.\n\n![figure "
            "compare](compare.png)"
          : "No figure: no method has a finite factor over its baseline (a baseline of 0 on a "
            "metric where higher is better has none).");
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
      const bool is_baseline = label == compared[i]->spec->baseline;
      const char* mark = is_baseline              ? ""
                         : c->versus_baseline > 0 ? " ▲"
                         : c->versus_baseline < 0 ? " ▼"
                                                  : " ≈";
      out += fmt::format(
          " {} ({}){}{}{} |", num(c->mean), c->rank, mark,
          c->seeds_paired > 0 ? fmt::format(" {}/{}", c->seeds_better, c->seeds_paired) : "",
          is_baseline ? " baseline" : "");
    }
    out += "\n";
  }
  out += "\n";
  for (size_t i = 0; i < compared.size(); ++i) {
    const FigureSummary& f = *compared[i];
    std::string best, better, worse, consistent, mixed;
    auto add = [](std::string& list, const std::string& item) {
      list += (list.empty() ? "" : ", ") + item;
    };
    for (const ComparedLine& c : lines[i]) {
      if (c.rank == 1) add(best, c.label);
      if (c.versus_baseline > 0) add(better, c.label);
      if (c.versus_baseline < 0) add(worse, c.label);
      if (c.seeds_paired == 0) continue;
      // The same sign in every seed, or not: a ranking that flips between seeds is not one.
      const std::string tally = fmt::format("{} ({}/{})", c.label, c.seeds_better, c.seeds_paired);
      if (c.seeds_better == 0 || c.seeds_better == c.seeds_paired)
        add(consistent, tally);
      else
        add(mixed, tally);
    }
    out += fmt::format(
        "- **{}**: best {}. Better than {} beyond the seed spread: {}. Worse beyond it: {}. The "
        "same sign in every seed: {}. Sign changing between seeds: {}.\n",
        f.spec->name, best.empty() ? "—" : best, f.spec->baseline, better.empty() ? "none" : better,
        worse.empty() ? "none" : worse, consistent.empty() ? "none" : consistent,
        mixed.empty() ? "none" : mixed);
  }
  return out;
}

}  // namespace lenlab
