#include "report/comparison_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "plots/gnuplot_compare.hpp"
#include "report/number_text.hpp"
#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

// ▲ / ▼ / ≈ against the baseline ("" for the baseline itself).
std::string mark(const ComparedLine& c, bool is_baseline) {
  return is_baseline ? "" : c.versus_baseline > 0 ? "▲" : c.versus_baseline < 0 ? "▼" : "≈";
}

// A table cell: the mean, its rank, the mark and the seed tally.
std::string cell(const std::vector<ComparedLine>& lines, const std::string& label,
                 const std::string& baseline) {
  const auto c = std::find_if(lines.begin(), lines.end(),
                              [&](const ComparedLine& l) { return l.label == label; });
  if (c == lines.end() || c->n_seeds == 0) return " — |";
  const bool is_baseline = label == baseline;
  const std::string m = mark(*c, is_baseline);
  return fmt::format(
      " {} ({}){}{}{} |", number_or_dash(c->mean), c->rank,
      m.empty() ? std::string() : fmt::format(" {}", m),
      c->seeds_paired > 0 ? fmt::format(" {}/{}", c->seeds_better, c->seeds_paired) : "",
      is_baseline ? " baseline" : "");
}

// Each figure again, by test range (comparison_ranges()), where it has lengths in more than one:
// a verdict measured over the near lengths need not hold at the far ones.
std::string range_section(const std::vector<const FigureSummary*>& compared) {
  std::string out;
  for (const FigureSummary* f : compared) {
    std::vector<TestRange> ranges;
    for (const TestRange& r : comparison_ranges())
      if (has_lengths_in(*f, r)) ranges.push_back(r);
    if (ranges.size() < 2) continue;
    std::vector<std::vector<ComparedLine>> by_range;
    for (const TestRange& r : ranges) by_range.push_back(compare_lines(*f, r));
    out += fmt::format(
        "\n**{}** by test range (lengths in each range of l_train multiples):\n\n"
        "| method |",
        f->spec->name);
    std::string rule = "|---|";
    for (const TestRange& r : ranges) {
      out += fmt::format(" {} |", r.label());
      rule += "---|";
    }
    out += "\n" + rule + "\n";
    std::string changes;
    for (const ComparedLine& line : by_range.front()) {
      out += fmt::format("| {} |", line.label);
      // A verdict changes when its mark does, or when the method stops (or starts) beating the
      // baseline in most seeds.
      std::string marks, tallies;
      std::set<std::string> seen_marks;
      std::set<bool> seen_majorities;
      for (size_t i = 0; i < ranges.size(); ++i) {
        out += cell(by_range[i], line.label, f->spec->baseline);
        const auto c = std::find_if(by_range[i].begin(), by_range[i].end(),
                                    [&](const ComparedLine& l) { return l.label == line.label; });
        if (c == by_range[i].end() || c->n_seeds == 0 || line.label == f->spec->baseline) continue;
        const std::string m = mark(*c, false);
        seen_marks.insert(m);
        seen_majorities.insert(2 * c->seeds_better > c->seeds_paired);
        marks += (marks.empty() ? "" : ", ") + fmt::format("{} {}", m, ranges[i].label());
        tallies +=
            (tallies.empty() ? "" : ", ") + fmt::format("{}/{}", c->seeds_better, c->seeds_paired);
      }
      out += "\n";
      if (seen_marks.size() > 1 || seen_majorities.size() > 1)
        changes += fmt::format("{}{} ({}; seeds better: {})", changes.empty() ? "" : "; ",
                               line.label, marks, tallies);
    }
    out += fmt::format("\nVerdicts that change with the test range: {}.\n",
                       changes.empty() ? "none" : changes);
  }
  return out;
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
    for (size_t i = 0; i < compared.size(); ++i)
      out += cell(lines[i], label, compared[i]->spec->baseline);
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
  return out + range_section(compared);
}

}  // namespace lenlab
