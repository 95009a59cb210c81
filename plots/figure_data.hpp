#pragma once
// A figure's numbers: for each line (a value of the figure's varied setting), the test MSE at
// every length, over seeds: mean, min and max (the band). Built from the runs on disk.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "results/figure_spec.hpp"
#include "results/run_record.hpp"

namespace lenlab {

struct FigureLine {
  std::string label;                   // e.g. "rope", "invsqrt", "15"
  TrainSpec spec;                      // the line's settings (seed = the first seed's)
  std::vector<const RunRecord*> runs;  // one per seed found completed
  std::vector<int> lengths;            // 1..l_test
  std::vector<double> mse_mean;        // [lengths] mean over seeds
  std::vector<double> mse_min;         // [lengths]
  std::vector<double> mse_max;         // [lengths]
};

struct FigureSummary {
  const FigureSpec* spec = nullptr;
  std::vector<FigureLine> lines;
  int missing_runs = 0;  // planned runs without completed results (diverged or not run)
};

// `runs` maps run ids to completed runs.
FigureSummary summarize_figure(const FigureSpec& figure, const std::vector<uint64_t>& seeds,
                               const std::map<std::string, RunRecord>& runs);

// Tidy CSV: one row per (line, seed, length): figure, line, run_id, task, pe, reparam,
// reparam_shift, l_train, l_test, steps, seed, length, mse, mean_prediction, mean_target,
// mse_reparam, final_train_loss.
std::string figure_csv(const FigureSummary& fig);

}  // namespace lenlab
