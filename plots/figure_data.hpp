#pragma once
// A figure's numbers: for each line (a value of the figure's varied setting), the figure's metric
// (FigureSpec::metric: test MSE, token accuracy, …) at every test length — or, for a markov
// position plot, at every position — over seeds: mean, min and max (the band); for a passkey depth
// plot also a (length × depth) grid. Built from the runs on disk.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "results/correlation.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "results/validation_choice.hpp"

namespace lenlab {

// Plot "temperature": one test length's curve of the figure's metric against the search's grid τ
// (the mean, min and max over the seeds that measured it), and the τ each criterion chose there
// (the mean over seeds of its finite values; NaN when none).
struct TemperatureCurve {
  int length = 0;
  std::vector<double> tau;                               // descending, as the grid
  std::vector<double> value_mean, value_min, value_max;  // [tau]
  // "auto-pmax", "auto-entropy" (Algorithm 1 by each statistic), "proposition_1",
  // "proposition_2" (the closed forms), "log_rule"; in temperature_criteria()'s order.
  std::map<std::string, double> chosen;
  int runs = 0;                             // seeds with the curve
  int at_low_bound = 0, at_high_bound = 0;  // of them, the evaluated τ at the grid's bound
};
// The criteria a temperature figure marks, in its key's order.
const std::vector<std::string>& temperature_criteria();
// How a report or key names one: "Algorithm 1, max-probability", …, "log rule".
std::string temperature_criterion_label(const std::string& criterion);
// The curve's mean at τ, interpolated linearly between grid points; NaN outside the grid.
double temperature_curve_at(const TemperatureCurve& c, double tau);

struct FigureLine {
  std::string label;                   // e.g. "rope", "invsqrt", "15"; pooled: "vcl: 4"
  bool pooled = false;                 // gathered from another figure (FigureSpec::is_pooled)
  TrainSpec spec;                      // the line's settings (seed = the first seed's)
  std::vector<const RunRecord*> runs;  // one per seed found completed (with [select]: the chosen)
  // With a [select] grid (else empty): per seed whose every combination ran, what was tried and
  // kept (results/validation_choice.hpp).
  std::vector<GridChoice> choices;
  // The curve. x: the test lengths (plot "length" and "depth"), or the positions 1..L at the
  // run's longest test length L (plot "position"), ascending: every x any seed's run has.
  // A run's value at a length is its metric there; for passkey, the mean over its depth cells.
  // Position plots: the excess cross-entropy over the chain's own loss (PositionResult::excess).
  std::vector<int> x;
  std::vector<double> value_mean;  // [x] mean over the seeds that have x
  std::vector<double> value_min;   // [x]
  std::vector<double> value_max;   // [x]
  // Plot "depth" only (else empty): the depths tested, ascending (cells at random depths, kNoDepth,
  // are left out: they have no place on a depth axis), and the metric of each (length, depth)
  // cell, mean over seeds, NaN where no seed's run has the cell.
  std::vector<double> depths;
  std::vector<double> grid;  // [x.size() × depths.size()], row-major: grid[i * depths.size() + j]
  // Plot "temperature" only (else empty): one curve per test length past l_train, ascending.
  std::vector<TemperatureCurve> temperature;
};

// Plot "misalignment": one point per completed run with a misalignment value (a run that two
// pooled lines share counts once, under the first: a duplicate would weigh it twice in the
// correlations), and the correlations across them.
struct MisalignmentPoint {
  size_t line = 0;  // index into FigureSummary::lines
  const RunRecord* run = nullptr;
  double misalignment = 0;  // at l_train (RunRecord::misalignment)
  double divergence = 0;    // its divergence part (markov; NaN for a run without one)
  double at_train = 0;      // the metric at the run's l_train (NaN when not tested there)
  double far = 0;           // the metric at MisalignmentScatter::at_length
};
struct MisalignmentScatter {
  int at_length = 0;  // FigureSpec::at_length
  // Runs with a misalignment value but no result at at_length (a results file cut short): no point.
  int without_far = 0;
  std::vector<MisalignmentPoint> points;
  // Across the points (results/correlation.hpp; NaN when undefined): misalignment against the
  // metric at at_length, and the metric at l_train against it (paper 000's Table 1 compares both).
  double pearson_misalignment = 0, spearman_misalignment = 0;
  double pearson_train = 0, spearman_train = 0;
  int n_train = 0;  // points with the metric at l_train
  // The misalignment's divergence part (symmetric KL, markov) against the same, over the points
  // that have it (n_divergence; 0: none has, and the coefficients are NaN).
  double pearson_divergence = 0, spearman_divergence = 0;
  int n_divergence = 0;
  // 95% percentile-bootstrap intervals of each coefficient above (results/correlation.hpp).
  Interval pearson_misalignment_ci, spearman_misalignment_ci, pearson_train_ci, spearman_train_ci,
      pearson_divergence_ci, spearman_divergence_ci;
};

struct FigureSummary {
  const FigureSpec* spec = nullptr;
  std::vector<FigureLine> lines;
  // Planned runs without completed results (diverged or not run); with a [select] grid, a line
  // and seed with a combination not run, or none completed with a validation score.
  int missing_runs = 0;
  MisalignmentScatter scatter;  // plot "misalignment" only
};

// `runs` maps run ids to completed runs; id_of gives a line's run id from its settings (default
// run_id: the plan's id where it names no parent run; lab/experiment/experiment.cpp passes the
// plan's ids, which hold a fine-tune's parent). figure.metric must be set, and a misalignment
// figure's at_length (std::invalid_argument otherwise; parse_experiment_config always sets both).
FigureSummary summarize_figure(const FigureSpec& figure, const std::vector<uint64_t>& seeds,
                               const std::map<std::string, RunRecord>& runs,
                               const std::function<std::string(const TrainSpec&)>& id_of = {});

// Tidy CSV with one header for every kind of figure, so an experiment's figures concatenate into
// one table:
//   figure, line, run_id, task, pe, reparam, reparam_shift, l_train, l_test, steps, seed, length,
//   mse, mean_prediction, mean_target, mse_reparam, final_train_loss,
//   depth, position, token_accuracy, exact_match, cross_entropy, excess_ce, entropy,
//   misalignment (the run's long-short misalignment at l_train; empty when it has none),
//   misalignment_divergence, misalignment_entropy (its two parts; markov only),
//   misalignment_perfect (what a perfect model gives on the same pairs; markov only),
//   tau (plot "temperature": the grid τ of a curve point; else empty)
// Rows: one per (line, seed, length) for a scalar task; one per (line, seed, length, depth) for a
// token task (one depth per length but for passkey); one per (line, seed, position) for a position
// plot, its length being the run's longest test length. Cells that do not apply to a row are empty:
// a scalar row's token columns; a token row's mse, mean_prediction, mean_target, mse_reparam,
// reparam and reparam_shift (token tasks have no target map); depth unless a passkey cell at a
// fixed depth; excess_ce unless markov; position and entropy unless a position row (whose
// exact_match is empty). A temperature plot's rows are its curves' points instead: one per (line,
// seed, length, τ), on the search's sequences.
std::string figure_csv(const FigureSummary& fig);

}  // namespace lenlab
