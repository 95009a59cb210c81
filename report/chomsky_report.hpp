#pragma once
// report.md's "Chomsky-hierarchy suite" and chomsky_scores.csv: the score Delétang et al. (2023)
// and Ruoss et al. (2023) give a model, its token accuracy averaged over the test lengths past
// l_train (41..500 in the study), per task and line (e.g. encoding), as the maximum over seeds
// (what their tables print) and the mean ± standard deviation over seeds (what a typical run
// gets), the tasks grouped by their level in the hierarchy. A figure takes part when it draws
// token_accuracy against length and all its lines train one of the study's 15 tasks.
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "results/run_record.hpp"

namespace lenlab {

// A run's score: the mean token accuracy over its test lengths > l_train; NaN when it has none.
double suite_score(const RunRecord& run);

// Seed statistics of one cell (one figure's line).
struct SuiteCell {
  int n_seeds = 0;  // runs with a score
  int n_fit = 0;    // of those, the runs that fit their training range (results/in_range_fit.hpp)
  double max = 0, mean = 0, sd = 0;  // sd: sample standard deviation (0 for one seed)
};
SuiteCell suite_cell(const FigureLine& line);

// Whether the figure is one of the suite's (above).
bool is_suite_figure(const FigureSummary& figure);

// The section; empty when no figure is a suite figure.
std::string chomsky_suite_section(const std::vector<FigureSummary>& figures);

// One row per run of a suite figure: figure, task, level, line, seed, run_id, score, first_length,
// last_length, n_lengths (the lengths past l_train it averages); empty when there is none.
std::string chomsky_scores_csv(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
