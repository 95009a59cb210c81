#pragma once
// report.md: for each claim the paper makes about its synthetic figures, the numbers measured in
// this experiment that bear on it and whether they support it; then the token tasks' figures
// (report/token_report.hpp); then every figure with its numbers. Computed from the results only.
#include <map>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "results/run_record.hpp"
#include "theory/power_law.hpp"

namespace lenlab {

// Per-line numbers of an MSE figure the report is made of (exposed for tests).
struct LineStats {
  double train_loss = 0;  // final train loss, mean over seeds (on f(y))
  double mse_within = 0;  // mean MSE over lengths 1..l_train (mean over seeds)
  double mse_beyond = 0;  // mean MSE over lengths l_train+1..l_test
  double mse_max_beyond = 0;
  double mse_at_l_test = 0;
  double beyond_trend = 0;  // Spearman rank correlation of MSE with length beyond l_train
  PowerLawFit growth;       // c·(l − a)^p fitted to the mean MSE beyond l_train
  // No growth to fit: the MSE beyond l_train is below 10x the in-range MSE, or below 1 % of the
  // target's variance over the training lengths (a fit would be a fit to noise).
  bool flat = false;
  int n_seeds = 0;
};
LineStats line_stats(const FigureLine& line);

std::string experiment_report(const std::vector<FigureSummary>& figures,
                              const std::map<std::string, RunRecord>& runs);

}  // namespace lenlab
