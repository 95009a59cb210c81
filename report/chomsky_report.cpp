#include "report/chomsky_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/csv.hpp"
#include "results/in_range_fit.hpp"
#include "results/range_means.hpp"

namespace lenlab {
namespace {

constexpr const char* kLevels[] = {"regular", "deterministic context-free", "context-sensitive"};

std::string task_of(const FigureSummary& figure) {
  return figure.lines.empty() ? "" : figure.lines.front().spec.task;
}

std::string level_of(const FigureSummary& figure) {
  return task_info(parse_task(task_of(figure))).level;
}

// The lengths past l_train a run's score averages: first, last, count.
struct Beyond {
  int first = 0, last = 0, count = 0;
};
Beyond beyond_of(const RunRecord& run) {
  Beyond b;
  for (const LengthResult& r : run.results) {
    if (r.length <= run.spec.l_train) continue;
    b.first = b.count == 0 ? r.length : std::min(b.first, r.length);
    b.last = std::max(b.last, r.length);
    ++b.count;
  }
  return b;
}

std::string cell_text(const SuiteCell& c) {
  if (c.n_seeds == 0) return "—";
  const std::string told =
      c.written ? fmt::format(" · told **{:.3f}** · {:.3f}", c.told_max, c.told_mean) : "";
  // Where some seeds fit and some do not, the mean of those that fit (all or none: the mean).
  const std::string fit_only =
      c.n_fit > 0 && c.n_fit < c.n_seeds ? fmt::format(": {:.3f}", c.fit_mean) : "";
  return fmt::format("**{:.3f}** · {:.3f} ± {:.3f} ({}, {} fit{}){}", c.max, c.mean, c.sd,
                     c.n_seeds, c.n_fit, fit_only, told);
}

// The max, mean and (when sd is given) sample standard deviation of `scores`, not empty.
void describe(const std::vector<double>& scores, double& max, double& mean, double* sd) {
  const double n = static_cast<double>(scores.size());
  max = *std::max_element(scores.begin(), scores.end());
  mean = 0;
  for (const double s : scores) mean += s / n;
  if (!sd) return;
  *sd = 0;
  if (scores.size() > 1) {
    double ss = 0;
    for (const double s : scores) ss += (s - mean) * (s - mean);
    *sd = std::sqrt(ss / (n - 1));
  }
}

}  // namespace

bool SuiteScore::decoded() const {
  return !std::isnan(written);
}

SuiteScore suite_scores(const RunRecord& run) {
  // The same mean as the manifest's mean_token_accuracy_beyond_l_train.
  std::vector<int> lengths;
  std::vector<double> told, written;
  for (const LengthResult& r : run.results) {
    lengths.push_back(r.length);
    told.push_back(r.token_accuracy);
    written.push_back(r.generated_token_accuracy);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SuiteScore s;
  s.told = range_means(lengths, told, run.spec.l_train).beyond(nan);
  // A length past l_train not decoded (NaN) makes this mean NaN: no written score.
  s.written = range_means(lengths, written, run.spec.l_train).beyond(nan);
  return s;
}

double suite_score(const RunRecord& run) {
  return suite_scores(run).lead();
}

SuiteCell suite_cell(const FigureLine& line) {
  std::vector<SuiteScore> scores;
  std::vector<const RunRecord*> scored;
  bool all_written = true;
  for (const RunRecord* run : line.runs)
    if (const SuiteScore s = suite_scores(*run); !std::isnan(s.told)) {
      scores.push_back(s);
      scored.push_back(run);
      all_written = all_written && s.decoded();
    }
  SuiteCell c;
  c.n_fit = count_fits(scored).fit;
  c.n_seeds = static_cast<int>(scores.size());
  if (scores.empty()) return c;
  c.written = all_written;
  std::vector<double> lead, told;
  for (const SuiteScore& s : scores) {
    lead.push_back(c.written ? s.written : s.told);
    told.push_back(s.told);
  }
  describe(lead, c.max, c.mean, &c.sd);
  describe(told, c.told_max, c.told_mean, nullptr);
  std::vector<double> fitting;
  for (size_t i = 0; i < scored.size(); ++i)
    if (in_range_fit(*scored[i]).state == FitState::kFits) fitting.push_back(lead[i]);
  double unused = 0;
  if (fitting.empty())
    c.fit_mean = std::numeric_limits<double>::quiet_NaN();
  else
    describe(fitting, unused, c.fit_mean, nullptr);
  return c;
}

bool is_suite_figure(const FigureSummary& figure) {
  if (figure.spec == nullptr || figure.spec->plot != "length" ||
      figure.spec->metric != "token_accuracy" || figure.lines.empty())
    return false;
  const std::string task = task_of(figure);
  for (const FigureLine& line : figure.lines)
    if (line.spec.task != task) return false;
  return *task_info(parse_task(task)).level != '\0';
}

std::string chomsky_suite_section(const std::vector<FigureSummary>& figures) {
  std::vector<const FigureSummary*> suite;
  std::vector<std::string> columns;  // line labels, in the order they first appear
  for (const FigureSummary& f : figures) {
    if (!is_suite_figure(f)) continue;
    suite.push_back(&f);
    for (const FigureLine& line : f.lines)
      if (std::find(columns.begin(), columns.end(), line.label) == columns.end())
        columns.push_back(line.label);
  }
  if (suite.empty()) return "";
  std::string out =
      "## Chomsky-hierarchy suite\n\n"
      "The score of Delétang et al. (2023) and Ruoss et al. (2023): a run's token accuracy "
      "averaged over its test lengths past l_train (the study's: 41..500 after training on "
      "1..40), on the answers the model writes where its runs decoded greedily (`decode = "
      "\"greedy\"`, the study's measure; the teacher-forced score follows as \"told\"), else "
      "with teacher forcing. Each cell is the **maximum over seeds** (what the papers' tables "
      "print), then the "
      "mean ± standard deviation over seeds, their number and how many of them fit their own "
      "training range (token accuracy ≥ 0.99 inside 1..l_train, the in-range gate: a run that "
      "did not learn its range says nothing about extrapolation; the study trains until it does), "
      "and where some seeds fit and others do not, after a colon the mean of those that fit. "
      "chomsky_scores.csv has every run's score. Chance for a one-token answer is one over its "
      "classes (parity, even-pairs, missing-duplicate-string: 0.5; the modulus-5 tasks: 0.2).\n\n";
  out += "| level | task | figure | lengths scored |";
  for (const std::string& c : columns) out += fmt::format(" {} |", c);
  out += "\n|---|---|---|---|";
  for (size_t i = 0; i < columns.size(); ++i) out += "---|";
  out += "\n";
  // Per column: the tasks' maxima and means, for the mean over tasks.
  std::map<std::string, std::vector<std::pair<double, double>>> by_column;
  for (const char* level : kLevels) {
    for (const FigureSummary* f : suite) {
      if (level_of(*f) != level) continue;
      Beyond lengths;
      for (const FigureLine& line : f->lines)
        for (const RunRecord* run : line.runs)
          if (const Beyond b = beyond_of(*run); b.count > lengths.count) lengths = b;
      out += fmt::format(
          "| {} | {} | {} | {} |", level, task_of(*f), f->spec->name,
          lengths.count > 0 ? fmt::format("{}..{} ({})", lengths.first, lengths.last, lengths.count)
                            : "none");
      for (const std::string& c : columns) {
        const auto line = std::find_if(f->lines.begin(), f->lines.end(),
                                       [&](const FigureLine& l) { return l.label == c; });
        if (line == f->lines.end()) {
          out += " |";
          continue;
        }
        const SuiteCell cell = suite_cell(*line);
        out += fmt::format(" {} |", cell_text(cell));
        if (cell.n_seeds > 0) by_column[c].emplace_back(cell.max, cell.mean);
      }
      out += "\n";
    }
  }
  out += "| all | mean over tasks | | |";
  for (const std::string& c : columns) {
    const auto& cells = by_column[c];
    if (cells.empty()) {
      out += " — |";
      continue;
    }
    double max = 0, mean = 0;
    for (const auto& [mx, mn] : cells) {
      max += mx / static_cast<double>(cells.size());
      mean += mn / static_cast<double>(cells.size());
    }
    out += fmt::format(" **{:.3f}** · {:.3f} ({} task{}) |", max, mean, cells.size(),
                       cells.size() == 1 ? "" : "s");
  }
  out += "\n\n";
  return out;
}

std::string chomsky_scores_csv(const std::vector<FigureSummary>& figures) {
  std::string out;
  for (const FigureSummary& f : figures) {
    if (!is_suite_figure(f)) continue;
    for (const FigureLine& line : f.lines)
      for (const RunRecord* run : line.runs) {
        const Beyond b = beyond_of(*run);
        const SuiteScore score = suite_scores(*run);  // NaN (no length past l_train): empty
        const auto number = [](double x) { return std::isnan(x) ? "" : fmt::format("{:.6g}", x); };
        const InRangeFit fit = in_range_fit(*run);
        const bool checked = fit.state != FitState::kUnchecked;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(f.spec->name),
                           line.spec.task, level_of(f), csv_field(line.label), run->spec.seed,
                           csv_field(run->id), number(score.lead()), b.first, b.last, b.count,
                           checked ? fmt::format("{:.6g}", fit.value) : "",
                           checked ? (fit.state == FitState::kFits ? "1" : "0") : "",
                           score.decoded() ? "written" : "told", number(score.told));
      }
  }
  if (out.empty()) return "";
  return "figure,task,level,line,seed,run_id,score,first_length,last_length,n_lengths,"
         "in_range_accuracy,fits_range,scored_on,told_score\n" +
         out;
}

}  // namespace lenlab
