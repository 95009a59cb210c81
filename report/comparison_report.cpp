#include "report/comparison_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "plots/gnuplot_compare.hpp"
#include "report/comparison_verdicts.hpp"
#include "report/number_text.hpp"
#include "report/setup_text.hpp"
#include "results/figure_metric.hpp"
#include "results/range_means.hpp"

namespace lenlab {

namespace {

const ComparedLine* find_line(const Comparison& c, const std::string& label) {
  for (const ComparedLine& l : c.lines)
    if (l.label == label) return &l;
  return nullptr;
}

VerdictWord word_of(const Comparison& c, const std::string& label) {
  for (size_t i = 0; i < c.lines.size(); ++i)
    if (c.lines[i].label == label) return c.words[i];
  return VerdictWord::kNotJudged;
}

// A table cell: the mean, its rank, the word when there is a difference, the seed tally.
std::string cell(const Comparison& c, const std::string& label) {
  const ComparedLine* l = find_line(c, label);
  if (!l || l->n_seeds == 0) return " — |";
  if (label == c.fig->spec->baseline)
    return fmt::format(
        " {} ({}) baseline{} |", number_or_dash(l->mean), l->rank,
        l->seeds_not_fit.empty() ? "" : fmt::format(" ({} unfit)", l->seeds_not_fit.size()));
  const VerdictWord w = word_of(c, label);
  const std::string word = w == VerdictWord::kHelps       ? " **helps**"
                           : w == VerdictWord::kHurts     ? " **hurts**"
                           : w == VerdictWord::kNotJudged ? " not judged"
                                                          : "";
  return fmt::format(
      " {} ({}){}{}{} |", number_or_dash(l->mean), l->rank, word,
      l->seeds_paired > 0 ? fmt::format(" {}/{}", l->seeds_better, l->seeds_paired) : "",
      l->seeds_not_fit.empty() ? "" : fmt::format(" ({} unfit)", l->seeds_not_fit.size()));
}

// The lines whose runs count test pairs reading a learned bias entry no training step reached
// (T5's buckets past the training window; train/untrained_bias.hpp): each run's share over its
// lengths past its own l_train, the mean over seeds and their range. "" when no run counts them.
std::string untrained_bias_line(const FigureSummary& f) {
  std::string parts;
  for (const FigureLine& line : f.lines) {
    std::vector<double> per_run;
    for (const RunRecord* r : line.runs) {
      std::vector<int> lengths;
      std::vector<double> shares;
      for (const LengthResult& x : r->results)
        if (!std::isnan(x.untrained_pairs)) {
          lengths.push_back(x.length);
          shares.push_back(x.untrained_pairs);
        }
      const RangeMeans m = range_means(lengths, shares, r->spec.l_train);
      if (m.n_beyond > 0) per_run.push_back(m.beyond(0));
    }
    if (per_run.empty()) continue;
    const auto [low, high] = std::minmax_element(per_run.begin(), per_run.end());
    double mean = 0;
    for (const double v : per_run) mean += v / static_cast<double>(per_run.size());
    parts += fmt::format("{}{} {:.3g} ({} seeds, {:.3g} to {:.3g})", parts.empty() ? "" : "; ",
                         line.label, mean, per_run.size(), *low, *high);
  }
  if (parts.empty()) return "";
  return fmt::format(
      "  - untrained bias: the share of the (answer row, key) pairs attended past l_train whose "
      "distance reads a bucket no training step reached (still its initial 0; distance_cap = "
      "\"trained\" maps those distances onto the largest trained one): {}.\n",
      parts);
}

// One verdict line per method of a figure's main table, in the grammar of every verdict: the
// setup, the test range, n, the effect with its interval, the adjusted p, and the word.
std::string verdict_lines(const Comparison& c, size_t family) {
  const FigureSummary& f = *c.fig;
  const FigureLine* base = baseline_with_runs(f);
  if (!base)
    return fmt::format("- **{}**: not judged (the baseline {} has no completed run).\n",
                       f.spec->name, f.spec->baseline);
  // The setup as the baseline's runs were trained (the first seed's settings).
  const TrainSpec& s = base->runs.front()->spec;
  std::string out =
      fmt::format("- **{}**: {}; {}; {} against the baseline {}, seed by seed:\n", f.spec->name,
                  setup_text(s), beyond_range_text(s.l_train, longest_length(base->runs)),
                  metric_label(f.spec->metric), f.spec->baseline);
  const ComparedLine* base_line = find_line(c, f.spec->baseline);
  out += fmt::format("  - the in-range gate ({}): the baseline's runs that did not fit: {}.\n",
                     base_line->in_range_rule, seed_list(base_line->seeds_not_fit));
  out += untrained_bias_line(f);
  for (size_t i = 0; i < c.lines.size(); ++i) {
    const ComparedLine& l = c.lines[i];
    if (l.label == f.spec->baseline) continue;
    if (!l.paired) {
      out += fmt::format("  - {}: **not judged** ({}).\n", l.label, not_judged_reason(l));
      continue;
    }
    const std::string left_out =
        l.seeds_not_fit.empty()
            ? ""
            : fmt::format(" ({} left out: did not fit 1..l_train)", seed_list(l.seeds_not_fit));
    const PairedComparison& p = *l.paired;
    // What the seeds could have found: nothing when even the most extreme pattern (every seed
    // the same way) cannot reach an adjusted p below the threshold; else the paired t-test's
    // smallest difference found with 80 % power.
    const double best_p = std::min(1.0, std::ldexp(2.0, -(p.n - p.ties))) * family;
    std::string detectable;
    if (c.words[i] != VerdictWord::kNoDetectableDifference)
      detectable = "";
    else if (p.ties == p.n)
      detectable = "; the runs are identical seed by seed";
    else if (best_p >= kVerdictAlpha)
      detectable = fmt::format(
          "; {} seeds cannot reach an adjusted p below {} (at best {:.2g}, every seed the same "
          "way): more seeds are needed to detect any difference",
          p.n - p.ties, kVerdictAlpha, best_p);
    else
      detectable = fmt::format("; the smallest difference these seeds could detect: {}",
                               number_or_dash(p.smallest_detectable));
    out += fmt::format(
        "  - {}: **{}**: difference {} (95 % bootstrap interval {} to {}; median {}), better in "
        "{}/{} seeds{}, Wilcoxon signed-rank p = {:.2g}, Holm-adjusted over {} comparisons p = "
        "{:.2g}{}.\n",
        l.label, verdict_name(c.words[i]), number_or_dash(p.mean_difference),
        number_or_dash(p.interval_low), number_or_dash(p.interval_high),
        number_or_dash(p.median_difference), p.wins, p.n, left_out, p.p_wilcoxon, family,
        c.adjusted_p[i], detectable);
  }
  return out;
}

// Each figure again, by test range, where it has lengths in more than one: a verdict measured over
// the near lengths need not hold at the far ones.
std::string range_section(const std::vector<Comparison>& all) {
  std::string out;
  for (size_t first = 0; first < all.size();) {
    size_t end = first + 1;
    if (all[first].main) {
      while (end < all.size() && !all[end].main) ++end;
      if (end == first + 1) {
        first = end;
        continue;
      }
    }
    const FigureSummary& f = *all[first].fig;
    out += fmt::format(
        "\n**{}** by test range (lengths in each range of l_train multiples):\n\n| method |",
        f.spec->name);
    std::string rule = "|---|";
    for (size_t r = first + 1; r < end; ++r) {
      out += fmt::format(" {} |", all[r].range.label());
      rule += "---|";
    }
    out += "\n" + rule + "\n";
    std::string changes;
    for (const ComparedLine& line : all[first].lines) {
      out += fmt::format("| {} |", line.label);
      std::string words;
      std::set<VerdictWord> seen;
      for (size_t r = first + 1; r < end; ++r) {
        out += cell(all[r], line.label);
        if (line.label == f.spec->baseline) continue;
        const VerdictWord w = word_of(all[r], line.label);
        seen.insert(w);
        words += (words.empty() ? "" : ", ") +
                 fmt::format("{} {}", verdict_name(w), all[r].range.label());
      }
      out += "\n";
      if (seen.size() > 1)
        changes += fmt::format("{}{} ({})", changes.empty() ? "" : "; ", line.label, words);
    }
    out += fmt::format("\nVerdicts that change with the test range: {}.\n",
                       changes.empty() ? "none" : changes);
    first = end;
  }
  return out;
}

}  // namespace

std::string comparison_section(const std::vector<FigureSummary>& figures) {
  std::vector<const FigureSummary*> compared;
  for (const FigureSummary& f : figures)
    if (!f.spec->baseline.empty()) compared.push_back(&f);
  if (compared.empty()) return "";
  const std::vector<Comparison> all = judge_comparisons(figures);
  const size_t family = family_size(all);
  std::vector<std::string> labels;  // every figure's lines, in order of first appearance
  for (const Comparison& c : all)
    if (c.main)
      for (const ComparedLine& l : c.lines)
        if (std::find(labels.begin(), labels.end(), l.label) == labels.end())
          labels.push_back(l.label);
  std::string out = fmt::format(
      "\n## Method comparison\n\nEach column is a figure that compares methods on one task: each "
      "line's metric averaged over the test lengths beyond the baseline's l_train (the same "
      "lengths for every line, whatever length it trained at), the mean over seeds, and its "
      "rank in the column (1 = best). k/n: seed by seed, the method beat the baseline trained with "
      "the same seed (the same initial weights and batches) in k of n seeds where both runs fit "
      "their training range (the in-range gate: MSE ≤ 1 % of the target's variance, token "
      "accuracy ≥ 0.99 or excess cross-entropy ≤ 0.01 nats inside 1..l_train; (u unfit): u runs "
      "of the method did not, and enter no test; a figure whose baseline did not fit in most "
      "seeds is not judged). The verdict is the "
      "paired test of those seeds' differences (Wilcoxon signed-rank, exact), its p adjusted "
      "(Holm) over all {} comparisons of this report: **helps** / **hurts** when the adjusted p "
      "is below {}, no mark when there is no detectable difference, *not judged* when there is no "
      "test. The smallest exact two-sided p of n paired seeds is 2/2ⁿ before the adjustment (3 "
      "seeds: 0.25, 5: 0.0625, 12: 0.00049); each verdict below says what its seeds could have "
      "detected. — : the method does not apply to the task, "
      "or has no completed run. {}\n\n| method |",
      family, kVerdictAlpha,
      has_compare_bars(compared)
          ? "The figure: each method's factor over its task's baseline.\n\n![figure "
            "compare](compare.png)"
          : "No figure: no method has a finite factor over its baseline (a baseline of 0 on a "
            "metric where higher is better has none).");
  std::string rule = "|---|";
  for (const Comparison& c : all)
    if (c.main) {
      const FigureSummary& f = *c.fig;
      // The column's task and encoding are the baseline's (a `vary = "pe"` figure's lines differ
      // in it): as its runs were trained, as in the verdict lines.
      const FigureLine* base = baseline_with_runs(f);
      const TrainSpec& s = base              ? base->runs.front()->spec
                           : f.lines.empty() ? f.spec->base
                                             : f.lines.front().spec;
      out += fmt::format(" {} ({}, {}; {}) |", f.spec->name, s.task, s.pe,
                         metric_label(f.spec->metric));
      rule += "---|";
    }
  out += "\n" + rule + "\n";
  for (const std::string& label : labels) {
    out += "| " + label + " |";
    for (const Comparison& c : all)
      if (c.main) out += cell(c, label);
    out += "\n";
  }
  out += "\nVerdicts:\n\n";
  for (const Comparison& c : all)
    if (c.main) out += verdict_lines(c, family);
  return out + range_section(all);
}

}  // namespace lenlab
