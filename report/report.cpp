#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "core/git_revision.hpp"
#include "plots/gnuplot_layers.hpp"
#include "report/chomsky_report.hpp"
#include "report/comparison_report.hpp"
#include "report/misalignment_report.hpp"
#include "report/temperature_report.hpp"
#include "report/token_report.hpp"
#include "results/correlation.hpp"
#include "results/range_means.hpp"
#include "theory/paper_closed_form.hpp"

namespace lenlab {

namespace {

std::string number_text(double x) {
  return fmt::format("{:.3g}", x);
}
std::string verdict(bool ok) {
  return ok ? "**supported**" : "**not supported**";
}

// A figure the paper's claims are about: found by name, and drawing the MSE against length (a
// token figure of the same name is not the paper's).
const FigureSummary* find(const std::vector<FigureSummary>& figs, const std::string& name) {
  for (const FigureSummary& f : figs)
    if (f.spec->name == name)
      return f.spec->metric == "mse" && f.spec->plot == "length" ? &f : nullptr;
  return nullptr;
}

const FigureLine* line_of(const FigureSummary& f, const std::string& label) {
  for (const FigureLine& l : f.lines)
    if (l.label == label) return &l;
  return nullptr;
}

bool complete(const FigureSummary& f) {
  for (const FigureLine& l : f.lines)
    if (l.runs.empty() || l.x.empty()) return false;
  return true;
}

std::string stats_table(const FigureSummary& f) {
  std::string out = fmt::format(
      "| {} | seeds | train loss (on f(y)) | test MSE 1..l_train | test MSE beyond l_train | "
      "test MSE at l_test | trend beyond (Spearman) | growth exponent p |\n"
      "|---|---|---|---|---|---|---|---|\n",
      f.spec->vary);
  for (const FigureLine& l : f.lines) {
    const LineStats s = line_stats(l);
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {:.2f} | {} |\n", l.label, s.n_seeds,
        number_text(s.train_loss), number_text(s.mse_within), number_text(s.mse_beyond),
        number_text(s.mse_at_l_test), s.beyond_trend,
        s.growth.ok() ? fmt::format("{:.2f} (a = {:.1f})", s.growth.p, s.growth.a) : "—");
  }
  return out;
}

// Claim: a mean task generalizes with NoPE — its error beyond l_train stays far below that of the
// best constant predictor, whose MSE at length l is the target's variance there.
std::string claim_mean(const FigureSummary& f, const std::string& what, double variance_at_l_test) {
  const FigureLine* nope = line_of(f, "nope");
  if (!nope || nope->runs.empty()) return "";
  const LineStats s = line_stats(*nope);
  const bool ok = s.mse_max_beyond < 0.1 * variance_at_l_test;
  std::string others;
  for (const FigureLine& l : f.lines)
    if (l.label != "nope" && !l.runs.empty())
      others += fmt::format("{} {}; ", l.label, number_text(line_stats(l).mse_max_beyond));
  return fmt::format(
      "- *{}* (figure {}): with NoPE the largest test MSE beyond l_train is {}, against {} for "
      "the best constant predictor at l_test (the target's variance) — {}. (Largest MSE beyond "
      "l_train with the other encodings: {})\n",
      what, f.spec->name, number_text(s.mse_max_beyond), number_text(variance_at_l_test),
      ok ? "more than 10x below it: " + verdict(true) : "not 10x below it: " + verdict(false),
      others.empty() ? "none" : others.substr(0, others.size() - 2));
}

// Claim: a task fails past l_train with every PE — the error at l_test is at least 100x the error
// inside the training range, and at least 1 in absolute terms (off by more than one unit).
std::string claim_fails(const FigureSummary& f, const std::string& task) {
  bool all = true;
  std::string detail;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    const LineStats s = line_stats(l);
    const bool fails = s.mse_at_l_test >= 1 && s.mse_at_l_test >= 100 * s.mse_within;
    all = all && fails;
    detail += fmt::format("{}: {} → {} ({}); ", l.label, number_text(s.mse_within),
                          number_text(s.mse_at_l_test), fails ? "fails" : "does not fail");
  }
  return fmt::format(
      "- *{} prediction fails past l_train with every positional encoding* (figure {}): test "
      "MSE within 1..l_train → at l_test = {}: {}. Criterion: MSE at l_test >= 1 and >= 100x the "
      "in-range MSE for every encoding: {}.\n",
      task, f.spec->name, f.lines.front().spec.l_test, detail.substr(0, detail.size() - 2),
      verdict(all));
}

// Claim: every reparam helps (beyond-range MSE below identity's), 1/sqrt most.
std::string claim_reparam(const FigureSummary& f, const std::string& task) {
  const FigureLine* id = line_of(f, "identity");
  if (!id || id->runs.empty()) return "";
  const double base = line_stats(*id).mse_beyond;
  bool all_help = true;
  std::string best;
  double best_mse = INFINITY;
  std::string detail;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    const double m = line_stats(l).mse_beyond;
    detail += fmt::format("{} {}; ", l.label, number_text(m));
    if (l.label != "identity") all_help = all_help && m < base;
    if (m < best_mse) best_mse = m, best = l.label;
  }
  return fmt::format(
      "- *Every reparameterization helps on {} prediction, 1/√ most* (figure {}): mean test MSE "
      "beyond l_train: {}. Every f below identity: {}; the best is '{}': {}.\n",
      task, f.spec->name, detail.substr(0, detail.size() - 2), verdict(all_help), best,
      verdict(best == "invsqrt"));
}

// Claim: a longer training range helps (MSE at l_test falls as l_train grows) but the error still
// grows with length beyond l_train (Spearman > 0.9 on every line).
std::string claim_l_train(const FigureSummary& f, const std::string& task) {
  std::vector<std::pair<int, LineStats>> rows;
  for (const FigureLine& l : f.lines)
    if (!l.runs.empty()) rows.push_back({l.spec.l_train, line_stats(l)});
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first < b.first; });
  bool helps = rows.size() >= 2, trend = true;
  std::string detail;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) helps = helps && rows[i].second.mse_at_l_test < rows[i - 1].second.mse_at_l_test;
    trend = trend && rows[i].second.beyond_trend > 0.9;
    detail += fmt::format("l_train {}: {} (trend {:.2f}); ", rows[i].first,
                          number_text(rows[i].second.mse_at_l_test), rows[i].second.beyond_trend);
  }
  return fmt::format(
      "- *A longer training range helps {} prediction, but the error still grows with length* "
      "(figure {}): test MSE at l_test: {}. Falls with every longer l_train: {}; grows with length "
      "beyond l_train on every line (Spearman > 0.9): {}.\n",
      task, f.spec->name, detail.substr(0, detail.size() - 2), verdict(helps), verdict(trend));
}

// Theorem 2 (Appendix B.1): the error past l_train grows as (l − a)² for length and sum, stays
// O(1) for mean. Judged on the exponent p of c·(l − a)^p fitted to each line's mean MSE beyond
// l_train: within [1.5, 2.5] for length/sum, |p| < 0.5 for mean; and, for NoPE on length/sum,
// set beside the closed form's prediction at l_test.
std::string claim_growth(const FigureSummary& f, bool quadratic) {
  bool all = true;
  std::string detail;
  for (const FigureLine& l : f.lines) {
    if (l.runs.empty()) continue;
    const LineStats s = line_stats(l);
    const bool ok = s.growth.ok() && (quadratic ? (s.growth.p >= 1.5 && s.growth.p <= 2.5)
                                                : std::abs(s.growth.p) < 0.5);
    all = all && ok;
    detail += s.growth.ok() ? fmt::format("{} p = {:.2f}; ", l.label, s.growth.p)
                            : fmt::format("{} (no fit); ", l.label);
  }
  std::string theory;
  if (quadratic)
    if (const FigureLine* nope = line_of(f, "nope"); nope && !nope->runs.empty()) {
      const TrainSpec& s = nope->spec;
      const double predicted = s.task == "length" ? paper_length_error(s.l_train, s.l_test)
                                                  : paper_sum_error(s.l_train, s.l_test);
      theory = fmt::format(
          " The closed form predicts an MSE of {} at l_test = {}; NoPE measured {}.",
          number_text(predicted), s.l_test, number_text(line_stats(*nope).mse_at_l_test));
    }
  return fmt::format(
      "- *Theorem 2: the {} error grows {} past l_train* (figure {}): exponent p of c·(l − a)^p "
      "fitted ({}) to the mean MSE beyond l_train: {}. Criterion: {} on every line: {}.{}\n",
      f.lines.front().spec.task, quadratic ? "as (l − a)²" : "no faster than O(1)", f.spec->name,
      quadratic ? "a too" : "a = l_train", detail.substr(0, detail.size() - 2),
      quadratic ? "1.5 <= p <= 2.5" : "|p| < 0.5", verdict(all), theory);
}

}  // namespace

LineStats line_stats(const FigureLine& line) {
  LineStats s;
  s.n_seeds = static_cast<int>(line.runs.size());
  for (const RunRecord* r : line.runs) s.train_loss += r->final_train_loss / line.runs.size();
  const int l_train = line.spec.l_train;
  const RangeMeans means = range_means(line.x, line.value_mean, l_train);
  s.mse_within = means.within(0);
  s.mse_beyond = means.beyond(0);
  std::vector<double> lens, errs;  // beyond l_train
  for (size_t i = 0; i < line.x.size(); ++i) {
    if (line.x[i] <= l_train) continue;
    s.mse_max_beyond = std::max(s.mse_max_beyond, line.value_mean[i]);
    lens.push_back(line.x[i]);
    errs.push_back(line.value_mean[i]);
  }
  if (!line.value_mean.empty()) s.mse_at_l_test = line.value_mean.back();
  s.beyond_trend = spearman(lens, errs);
  s.growth = fit_error_growth(line.spec.task, l_train, line.x, line.value_mean);
  return s;
}

std::string experiment_report(const std::vector<FigureSummary>& figures,
                              const std::map<std::string, RunRecord>& runs) {
  // Runs trained together on a GPU each record the group's seconds: a group counts once.
  double wall = 0;
  bool grouped = false;
  for (const auto& [id, r] : runs) {
    wall += r.wall_seconds / r.models_trained_together;
    grouped = grouped || r.models_trained_together > 1;
  }
  std::string out = fmt::format(
      "# lenlab: the paper's synthetic claims, measured\n\n"
      "Generated by `lenlab` ({}) from {} runs ({:.0f} s of training and evaluation in all{}). "
      "Every number below is computed from the runs in `runs/`; test MSE is measured on the "
      "original target y after inverting any reparameterization, averaged over the seeds.\n\n"
      "## Claims\n\n",
      git_revision(), runs.size(), wall,
      grouped ? ", a group of runs trained together on the GPU counted once" : "");
  std::string claims;
  if (auto f = find(figures, "1a"); f && complete(*f)) {
    const double l = f->lines.front().spec.l_test;
    claims += claim_mean(*f, "Mean prediction generalizes with NoPE", 1.0 / (4 * l));
  }
  if (auto f = find(figures, "5"); f && complete(*f)) {
    const double l = f->lines.front().spec.l_test;
    // #ones uniform in 0..l: Var(k/l) = ((l+1)² − 1)/12 / l² = (l + 2)/(12 l).
    claims += claim_mean(*f, "Mean prediction generalizes when #ones is uniform in 0..l",
                         (l + 2) / (12 * l));
  }
  if (auto f = find(figures, "1b"); f && complete(*f)) claims += claim_fails(*f, "Length");
  if (auto f = find(figures, "4a"); f && complete(*f)) claims += claim_fails(*f, "Sum");
  if (auto f = find(figures, "1c"); f && complete(*f)) claims += claim_reparam(*f, "length");
  if (auto f = find(figures, "4b"); f && complete(*f)) claims += claim_reparam(*f, "sum");
  if (auto f = find(figures, "3b"); f && complete(*f)) claims += claim_l_train(*f, "length");
  if (auto f = find(figures, "3a"); f && complete(*f)) claims += claim_l_train(*f, "sum");
  if (auto f = find(figures, "1b"); f && complete(*f)) claims += claim_growth(*f, true);
  if (auto f = find(figures, "4a"); f && complete(*f)) claims += claim_growth(*f, true);
  if (auto f = find(figures, "1a"); f && complete(*f)) claims += claim_growth(*f, false);
  out += claims.empty() ? "No figure of the paper with all its runs is in this folder.\n" : claims;
  out += chomsky_suite_section(figures);
  out += token_tasks_section(figures);
  out += comparison_section(figures);

  out += "\n## Figures\n";
  for (const FigureSummary& f : figures) {
    out += fmt::format("\n### Figure {}: {}\n\n![figure {}](fig{}.png)\n\n", f.spec->name,
                       f.spec->title, f.spec->name, f.spec->name);
    if (f.missing_runs > 0)
      out += fmt::format("{} planned run(s) are missing or diverged.\n\n", f.missing_runs);
    if (f.spec->plot == "misalignment")
      out += misalignment_section(f);
    else
      out += f.spec->metric == "mse" ? stats_table(f)
                                     : "Its numbers are in [Token tasks](#token-tasks).\n";
    out += temperature_section(f);
    if (has_layer_figure(f, LayerFigure::kStatistics))
      out += fmt::format(
          "\nIts runs' attention per layer, entropy and largest probability against length:\n\n"
          "![figure {0} by layer](fig{0}-layers.png)\n",
          f.spec->name);
    if (has_layer_figure(f, LayerFigure::kDistance))
      out += fmt::format(
          "\nIts runs' attention logits by relative distance, per layer:\n\n"
          "![figure {0} by distance](fig{0}-distance.png)\n",
          f.spec->name);
    if (has_layer_figure(f, LayerFigure::kBias))
      out += fmt::format(
          "\nIts runs' positional bias on the logits after training, per layer and head (paper "
          "002's Figure 1):\n\n"
          "![figure {0} positional bias](fig{0}-bias.png)\n",
          f.spec->name);
  }
  return out;
}

}  // namespace lenlab
