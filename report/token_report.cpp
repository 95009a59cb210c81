#include "report/token_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/number_text.hpp"
#include "report/setup_text.hpp"
#include "results/figure_metric.hpp"
#include "results/in_range_fit.hpp"
#include "results/range_means.hpp"

namespace lenlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether a seed-mean value passes the metric's threshold (NaN never does).
bool passes(double v, const std::string& metric) {
  return metric_is_fraction(metric) ? v >= kAccuracyThreshold : v <= kExcessThreshold;
}

// "≥ 0.9 token accuracy", "≥ 0.9 exact match" or "≤ 0.1 nats of excess cross-entropy".
std::string threshold_text(const std::string& metric) {
  return metric_is_fraction(metric)
             ? fmt::format("≥ {:g} {}", kAccuracyThreshold,
                           metric == "exact_match" ? "exact match" : "token accuracy")
             : fmt::format("≤ {:g} nats of excess cross-entropy", kExcessThreshold);
}

// Higher is better for the fractions, lower for the cross-entropies.
bool better(double a, double b, const std::string& metric) {
  return metric_is_fraction(metric) ? a > b : a < b;
}

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// The figure's first line: what it draws, and the range of the lines' means beyond l_train.
std::string findings(const FigureSummary& f, const std::string& x_name) {
  const std::string& metric = f.spec->metric;
  std::string out = fmt::format("{} against {}", capitalized(metric_label(metric)), x_name);
  const FigureLine *best = nullptr, *worst = nullptr;
  double best_v = kNaN, worst_v = kNaN;
  int n = 0;
  for (const FigureLine& l : f.lines) {
    const double v = token_line_stats(l, metric).beyond;
    if (std::isnan(v)) continue;
    if (!best || better(v, best_v, metric)) best = &l, best_v = v;
    if (!worst || better(worst_v, v, metric)) worst = &l, worst_v = v;
    ++n;
  }
  if (n == 0) return out + "; no line has a completed run tested beyond l_train.\n";
  if (n == 1)
    return out + fmt::format("; beyond l_train it averages {} ({}).\n", number_or_dash(best_v),
                             best->label);
  if (best_v == worst_v)
    return out + fmt::format("; beyond l_train every line averages {}.\n", number_or_dash(best_v));
  return out + fmt::format("; beyond l_train the lines average from {} ({}) to {} ({}).\n",
                           number_or_dash(worst_v), worst->label, number_or_dash(best_v),
                           best->label);
}

// What the figure's numbers were measured on: the setup (the first run's), the longest test length
// in multiples of l_train, the seeds per line.
std::string setup_line(const FigureSummary& f) {
  const FigureRuns r = figure_runs(f);
  if (r.runs.empty()) return "";
  const TrainSpec& s = r.runs.front()->spec;
  const int longest = longest_length(r.runs);
  return fmt::format(
      "Setup: {}; tested up to length {} ({:.3g}× l_train); up to {} seed{} per line.\n\n",
      setup_text(s, f.spec->vary != "pe"), longest, static_cast<double>(longest) / s.l_train,
      r.most, r.most == 1 ? "" : "s");
}

// The sentence that names the line that generalizes furthest.
std::string furthest(const FigureSummary& f, const std::string& x_name) {
  const std::string& metric = f.spec->metric;
  if (metric_is_raw_loss(metric))
    return fmt::format("Raw {} has no threshold, so no line is said to generalize.\n",
                       metric == "cross_entropy" ? "cross-entropy" : metric_label(metric));
  if (is_attention_metric(metric))
    return "An attention statistic describes the attention, not success: no line is said to "
           "generalize by it.\n";
  int best = 0;
  std::string who;
  for (const FigureLine& l : f.lines) {
    const int g = token_line_stats(l, metric).generalizes_to;
    if (g > best) best = g, who.clear();
    if (g == best && g > 0) who += (who.empty() ? "" : ", ") + l.label;
  }
  if (best == 0)
    return fmt::format("None reaches {} even at its first tested {}.\n", threshold_text(metric),
                       x_name);
  return fmt::format("Generalizes furthest: {} ({} up to {} {}).\n", who, threshold_text(metric),
                     x_name, best);
}

std::string line_table(const FigureSummary& f, const std::string& x_name) {
  const std::string& metric = f.spec->metric;
  // The metric by its config name: the figure's first line spells it out.
  std::string out = fmt::format(
      "| {0} | seeds | final train loss (cross-entropy) | {1} within 1..l_train | {1} beyond "
      "l_train | {1} at the longest {2} | generalizes to ({2}) | fit 1..l_train |\n"
      "|---|---|---|---|---|---|---|---|\n",
      f.spec->vary, metric, x_name);
  for (const FigureLine& l : f.lines) {
    const TokenLineStats s = token_line_stats(l, metric);
    const std::string g = s.generalizes_to == kNoThreshold ? "n/a"
                          : s.generalizes_to == 0          ? "—"
                                                           : fmt::format("{}", s.generalizes_to);
    // The learned-in-range gate, run by run (results/in_range_fit.hpp); text has no rule.
    const FitCount fits = count_fits(l.runs);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", l.label, s.n_seeds,
                       s.n_seeds ? number_or_dash(s.train_loss) : "—", number_or_dash(s.within),
                       number_or_dash(s.beyond), number_or_dash(s.at_longest), g,
                       l.runs.empty() ? "—"
                       : fits.checked ? fmt::format("{}/{}", fits.fit, fits.checked)
                                      : "no rule");
  }
  return out;
}

// Length figures of a raw loss (text's perplexity): each line's seed-mean value at l_train and at
// 2, 4, 8 and 16 times l_train, with its change from l_train, the way ALiBi's paper (Press et al.
// 2022, Table 2) reports perplexity past the training length. Empty when no line tests l_train
// and one of the multiples.
std::string multiples_table(const FigureSummary& f) {
  const std::string& metric = f.spec->metric;
  const auto at = [](const FigureLine& l, int x) {
    const auto it = std::find(l.x.begin(), l.x.end(), x);
    return it == l.x.end() ? kNaN : l.value_mean[it - l.x.begin()];
  };
  std::string rows;
  for (const FigureLine& l : f.lines) {
    const int L = l.spec.l_train;
    const double base = at(l, L);
    if (std::isnan(base)) continue;
    std::string row = fmt::format("| {} | {} |", l.label, number_or_dash(base));
    bool any = false;
    for (const int k : {2, 4, 8, 16}) {
      const double v = at(l, k * L);
      any = any || !std::isnan(v);
      row += std::isnan(v)
                 ? " — |"
                 : fmt::format(" {} ({:+.1f} %) |", number_or_dash(v), 100 * (v / base - 1));
    }
    if (any) rows += row + "\n";
  }
  if (rows.empty()) return "";
  return fmt::format(
      "\n{} at multiples of l_train (seed means; the change from l_train in parentheses):\n\n"
      "| {} | at l_train | 2× | 4× | 8× | 16× |\n|---|---|---|---|---|---|\n{}",
      capitalized(metric_label(metric)), f.spec->vary, rows);
}

// Depth figures: the metric per depth, averaged over the lengths beyond l_train.
std::string depth_table(const FigureSummary& f) {
  std::vector<double> depths;  // every line's, in order (lines share them in practice)
  for (const FigureLine& l : f.lines)
    for (double d : l.depths)
      if (std::find(depths.begin(), depths.end(), d) == depths.end()) depths.push_back(d);
  std::sort(depths.begin(), depths.end());
  if (depths.empty()) return "";
  std::string head = fmt::format("| {} |", f.spec->vary), rule = "|---|";
  for (double d : depths) {
    head += fmt::format(" depth {:g} |", d);
    rule += "---|";
  }
  std::string out =
      fmt::format("\n{} by key depth, averaged over the test lengths beyond l_train:\n\n{}\n{}\n",
                  capitalized(metric_label(f.spec->metric)), head, rule);
  for (const FigureLine& l : f.lines) {
    const TokenLineStats s = token_line_stats(l, f.spec->metric);
    out += fmt::format("| {} |", l.label);
    for (double d : depths) {
      const auto at = std::find(l.depths.begin(), l.depths.end(), d);
      out += fmt::format(" {} |", at == l.depths.end()
                                      ? "—"
                                      : number_or_dash(s.by_depth_beyond[at - l.depths.begin()]));
    }
    out += "\n";
  }
  return out;
}

}  // namespace

int generalizes_to(const std::vector<int>& x, const std::vector<double>& mean,
                   const std::string& metric) {
  if (metric_is_raw_loss(metric) || is_attention_metric(metric)) return kNoThreshold;
  int last = 0;
  for (size_t i = 0; i < x.size() && i < mean.size() && passes(mean[i], metric); ++i) last = x[i];
  return last;
}

TokenLineStats token_line_stats(const FigureLine& line, const std::string& metric) {
  TokenLineStats s;
  s.n_seeds = static_cast<int>(line.runs.size());
  for (const RunRecord* r : line.runs) s.train_loss += r->final_train_loss / line.runs.size();
  const int l_train = line.spec.l_train;
  const RangeMeans means = range_means(line.x, line.value_mean, l_train);
  s.within = means.within(kNaN);
  s.beyond = means.beyond(kNaN);
  s.at_longest = line.value_mean.empty() ? kNaN : line.value_mean.back();
  s.generalizes_to = generalizes_to(line.x, line.value_mean, metric);
  const size_t n_depths = line.depths.size();
  for (size_t j = 0; j < n_depths; ++j) {
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < line.x.size(); ++i) {
      const double v = line.grid[i * n_depths + j];
      if (line.x[i] > l_train && std::isfinite(v)) sum += v, ++n;
    }
    s.by_depth_beyond.push_back(n ? sum / n : kNaN);
  }
  return s;
}

std::string token_tasks_section(const std::vector<FigureSummary>& figures) {
  std::string parts;
  for (const FigureSummary& f : figures) {
    if (f.spec->metric == "mse" || f.spec->plot == "misalignment") continue;  // their own
    const std::string x_name = f.spec->plot == "position" ? "position" : "length";
    parts += fmt::format("\n### Figure {}: {}\n\n", f.spec->name, f.spec->title);
    parts += setup_line(f);
    parts += findings(f, x_name);
    if (f.missing_runs > 0)
      parts += fmt::format("{} planned run(s) are missing or diverged.\n", f.missing_runs);
    parts += fmt::format("\n{}\n{}", line_table(f, x_name), furthest(f, x_name));
    if (f.spec->plot == "depth") parts += depth_table(f);
    if (f.spec->plot == "length" && metric_is_raw_loss(f.spec->metric)) parts += multiples_table(f);
  }
  if (parts.empty()) return "";
  return fmt::format(
             "\n## Token tasks\n\n"
             "Every number is a mean over seeds. *Generalizes to* is the longest tested length "
             "(for a "
             "position plot: position, at the longest test length) up to which the seed-mean "
             "metric "
             "stays at or above {:g} for token accuracy and exact match, or at or below {:g} nats "
             "for the "
             "excess cross-entropy, at every length tested before it too; — when the first tested "
             "one "
             "already misses; n/a for raw cross-entropy and perplexity, which have no threshold. "
             "Passkey's value "
             "at a "
             "length is the mean over its depths.\n",
             kAccuracyThreshold, kExcessThreshold) +
         parts;
}

}  // namespace lenlab
