#pragma once
// The comparison figure, compare.{dat,gp,png,svg} in the experiment folder: every figure with a
// baseline (a method comparison on one task, plots/method_comparison.hpp) is a colour, every method
// a group of bars, one per task it applies to. A bar's height is the method's improvement over the
// baseline beyond l_train, on a log axis, as a factor ≥ 1 when better: baseline ÷ method for the
// MSE and cross-entropies, method ÷ baseline for accuracy and exact match; its whisker spans the
// same ratio over the method's seeds (the baseline at its mean). 1 is "as the baseline".
#include <filesystem>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

// The figures compared (those with a baseline), in order; empty: nothing to draw.
std::vector<const FigureSummary*> compared_figures(const std::vector<FigureSummary>& figures);
// Whether any method has a finite improvement factor: none when every baseline is 0 for a metric
// where higher is better (exact match 0 beyond l_train), or no method has a completed run.
bool has_compare_bars(const std::vector<const FigureSummary*>& compared);
std::string compare_dat(const std::vector<const FigureSummary*>& compared);
std::string compare_script(const std::vector<const FigureSummary*>& compared);
// Writes the .dat and .gp into `dir` and runs gnuplot (false: no gnuplot); without bars, the .dat
// alone (and true).
bool render_compare_figure(const std::vector<const FigureSummary*>& compared,
                           const std::filesystem::path& dir, const PlotOptions& opt);

}  // namespace lenlab
