#pragma once
// report.md's "Chomsky-hierarchy suite" and chomsky_scores.csv: the score Delétang et al. (2023)
// and Ruoss et al. (2023) give a model, its token accuracy averaged over the test lengths past
// l_train (41..500 in the study), per task and line (e.g. encoding), as the maximum over seeds
// (what their tables print) and the mean ± standard deviation over seeds (what a typical run
// gets), the tasks grouped by their level in the hierarchy; scored on what the model writes when
// the runs decoded greedily (the study's measure), with the teacher-forced score beside it. A
// figure takes part when it draws token_accuracy against length and all its lines train one of
// the study's 15 tasks.
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "results/run_record.hpp"

namespace lenlab {

// A run's scores over its test lengths > l_train (NaN when it has none): the mean token accuracy
// with teacher forcing ("told"), and of the answers it wrote itself when every one of those lengths
// was decoded greedily (`decode = "greedy"`; else NaN): what the study scores.
struct SuiteScore {
  double told = 0, written = 0;
  bool decoded() const;  // written is a number
  double lead() const { return decoded() ? written : told; }
};
SuiteScore suite_scores(const RunRecord& run);
// The score a cell leads with: written when decoded, else told.
double suite_score(const RunRecord& run);

// Seed statistics of one cell (one figure's line): of the written scores when every run of the
// line was decoded, else of the told ones; then the told scores' max and mean beside them.
struct SuiteCell {
  int n_seeds = 0;  // runs with a score
  int n_fit = 0;    // of those, the runs that fit their training range (results/in_range_fit.hpp)
  double max = 0, mean = 0, sd = 0;  // sd: sample standard deviation (0 for one seed)
  bool written = false;              // max, mean, sd are of what the runs wrote
  double told_max = 0, told_mean = 0;
  // The mean of the lead score over the runs that fit alone (NaN when none does): extrapolation
  // scored only where the range was learned.
  double fit_mean = 0;
};
SuiteCell suite_cell(const FigureLine& line);

// Whether the figure is one of the suite's (above).
bool is_suite_figure(const FigureSummary& figure);

// The section; empty when no figure is a suite figure.
std::string chomsky_suite_section(const std::vector<FigureSummary>& figures);

// One row per run of a suite figure: figure, task, level, line, seed, run_id, score (the lead
// score), first_length, last_length, n_lengths (the lengths past l_train it averages),
// in_range_accuracy, fits_range, scored_on ("written" or "told"), told_score; empty when there is
// none.
std::string chomsky_scores_csv(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
