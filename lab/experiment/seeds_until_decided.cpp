#include "lab/experiment/seeds_until_decided.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "lab/experiment/experiment_folder.hpp"
#include "lab/experiment/selection.hpp"

namespace lenlab {

namespace fs = std::filesystem;

int seeds_to_reach(size_t open_tests) {
  const double m = static_cast<double>(std::max<size_t>(open_tests, 1));
  int n = 1;
  while (std::ldexp(2.0, -n) * m >= kVerdictAlpha) ++n;  // 2^(1-n) · m
  return n;
}

size_t open_tests(const std::vector<Comparison>& judged) {
  size_t n = 0;
  for (const Comparison& c : judged)
    for (size_t i = 0; i < c.lines.size(); ++i)
      n += c.lines[i].paired && c.words[i] != VerdictWord::kHelps &&
           c.words[i] != VerdictWord::kHurts;
  return n;
}

// Straight to seeds_to_reach: every round below it is a sweep that cannot decide anything. Past it,
// kSeedsPerRound at a time: each round is one more sweep and judgement (one seed a round would
// judge after every seed, paying a sweep's start for each), and a figure stops at most one seed
// past the first count that decides it; a jump to the n a power calculation asks for would rest
// on the effect measured from few seeds, which is what is in doubt.
int next_seed_count(int now, int max_seeds, size_t open) {
  return std::min(max_seeds, std::max(now + kSeedsPerRound, seeds_to_reach(open)));
}

namespace {

// A line that more seeds may decide: no detectable difference, or no test for want of a seed in
// common with the baseline (a line with an infinite average or without a completed run would
// stay so). The baseline's own line has no test either and is no such line.
bool line_undecided(const Comparison& c, size_t i) {
  const ComparedLine& l = c.lines[i];
  if (l.label == c.fig->spec->baseline) return false;
  if (c.words[i] == VerdictWord::kNoDetectableDifference) return true;
  // Not judged for want of a pair (no seed in common, or the in-range gate left every pair out):
  // more seeds can give one. Not where the baseline or the method missed its range in most seeds:
  // more of a model that does not learn will not decide anything.
  return c.words[i] == VerdictWord::kNotJudged && !l.paired && !l.not_finite && l.n_seeds > 0 &&
         !l.baseline_unfit && 2 * l.seeds_not_fit.size() <= static_cast<size_t>(l.n_seeds);
}

}  // namespace

std::vector<std::string> undecided_figures(const std::vector<Comparison>& judged) {
  std::vector<std::string> out;
  for (const Comparison& c : judged) {
    if (!c.main || c.fig->spec->vary == "seed") continue;
    for (size_t i = 0; i < c.lines.size(); ++i)
      if (line_undecided(c, i)) {
        out.push_back(c.fig->spec->name);
        break;
      }
  }
  return out;
}

std::vector<uint64_t> seeds_extended(std::vector<uint64_t> seeds, size_t n) {
  uint64_t next = seeds.empty() ? 1 : *std::max_element(seeds.begin(), seeds.end()) + 1;
  while (seeds.size() < n) seeds.push_back(next++);
  return seeds;
}

std::vector<const FigureSpec*> growable_figures(const ExperimentConfig& config,
                                                const std::vector<std::string>& figures) {
  std::vector<const FigureSpec*> out;
  for (const FigureSpec& f : config.figures)
    if (!f.baseline.empty() && f.vary != "seed" &&
        (figures.empty() || std::find(figures.begin(), figures.end(), f.name) != figures.end()))
      out.push_back(&f);
  return out;
}

int seeds_until_decided_cap(int flag, const std::string& config_text,
                            const std::string& config_source, const ExperimentConfig& config,
                            const std::vector<std::string>& figures,
                            const std::vector<uint64_t>& seeds) {
  if (flag < 0 || flag > kMaxSeedsUntilDecided)
    throw UsageError(fmt::format("--seeds-until-decided must be an integer from 1 to {}, got {}",
                                 kMaxSeedsUntilDecided, flag));
  const int cap = flag > 0 ? flag : config_seeds_until_decided(config_text, config_source);
  if (cap == 0) return 0;
  const std::string named = flag > 0
                                ? fmt::format("--seeds-until-decided {}", cap)
                                : fmt::format("{}: seeds_until_decided = {}", config_source, cap);
  const std::vector<const FigureSpec*> growable = growable_figures(config, figures);
  if (growable.empty()) {
    if (flag == 0) return 0;  // the config's key is for its compared figures, none selected here
    throw UsageError(fmt::format(
        "{}: no selected figure has a baseline, so there is no comparison to decide; give a "
        "figure 'baseline = \"LABEL\"' (docs/tasks.md), select one with --figures, or leave the "
        "flag out",
        named));
  }
  for (const FigureSpec* f : growable)
    if (const size_t now = f->line_seeds(0, seeds).size(); now > static_cast<size_t>(cap))
      throw UsageError(fmt::format(
          "{} is below the {} seeds figure '{}' already runs; give at least {} (the most seeds a "
          "compared figure may grow to){}",
          named, now, f->name, now, flag > 0 ? "" : ", or override it with --seeds-until-decided"));
  return cap;
}

std::vector<PlannedRun> most_added_runs(ExperimentConfig config,
                                        const std::vector<std::string>& figures,
                                        const std::vector<uint64_t>& seeds, int max_seeds,
                                        const std::vector<PlannedRun>& planned) {
  std::vector<std::string> grown;
  for (const FigureSpec* f : growable_figures(config, figures)) grown.push_back(f->name);
  for (FigureSpec& f : config.figures)
    if (std::find(grown.begin(), grown.end(), f.name) != grown.end())
      f.seeds = seeds_extended(f.line_seeds(0, seeds), static_cast<size_t>(max_seeds));
  std::set<std::string> have;
  for (const PlannedRun& r : planned) have.insert(r.id);
  std::vector<PlannedRun> added;
  for (const PlannedRun& r : plan_runs(config, figures, seeds))
    if (!have.count(r.id)) added.push_back(r);
  return added;
}

void add_seeds_until_decided(const fs::path& out, int max_seeds,
                             const std::function<void(const std::vector<PlannedRun>&)>& train,
                             std::ostream* log) {
  for (int round = 1;; ++round) {
    const std::unique_ptr<ExperimentFolder> folder = load_experiment_folder(out);
    const std::vector<Comparison> judged = judge_comparisons(folder->summaries);
    const size_t open = open_tests(judged);
    Selection selection = folder->selection;
    std::vector<std::string> grown, at_cap;
    for (const std::string& name : undecided_figures(judged)) {
      const std::vector<uint64_t> now = folder->config.find(name)->line_seeds(0, selection.seeds);
      const int n = static_cast<int>(now.size());
      if (n >= max_seeds) {
        at_cap.push_back(fmt::format("{} ({} seeds)", name, n));
        continue;
      }
      const int next = next_seed_count(n, max_seeds, open);
      selection.grown_seeds[name] = seeds_extended(now, static_cast<size_t>(next));
      grown.push_back(fmt::format("{} ({} → {} seeds)", name, n, next));
    }
    if (grown.empty()) {
      if (log)
        *log << (at_cap.empty()
                     ? std::string("seeds until decided: every compared figure is decided\n")
                     : fmt::format("seeds until decided: still undecided at the cap of {} seeds: "
                                   "{}\n",
                                   max_seeds, fmt::join(at_cap, ", ")));
      return;
    }
    if (log)
      *log << fmt::format(
          "seeds until decided, round {}: undecided {}{}\n", round, fmt::join(grown, ", "),
          at_cap.empty() ? "" : fmt::format("; at the cap: {}", fmt::join(at_cap, ", ")));
    write_file_atomic(out / "selection.json", selection_json(selection));
    ExperimentConfig config = load_experiment_config((out / "config.toml").string());
    apply_selection(config, selection);
    train(plan_runs(config, selection.figures, selection.seeds));
  }
}

}  // namespace lenlab
