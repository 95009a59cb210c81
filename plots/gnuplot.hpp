#pragma once
// Drawing a figure with gnuplot: the numbers go to fig<NAME>.dat, the drawing instructions to a
// self-contained fig<NAME>.gp next to it (so a figure can be restyled and redrawn by hand, without
// lenlab: `cd DIR && gnuplot fig1a.gp`), and gnuplot turns them into fig<NAME>.png and .svg.
// gnuplot is optional: without it the .dat and .gp are still written and the caller prints
// gnuplot_missing_message.
//
// What is drawn follows the figure's plot and metric (results/figure_metric.hpp):
//   plot "length", "position": a line per FigureLine (mean over seeds, min–max band) against test
//     length or position, the training range shaded; the y axis per metric: the MSE on a log axis
//     of whole decades, accuracy and exact match on [0, 1], cross-entropies linear over the data
//     (the excess with a dotted line at 0, a perfect model's value);
//   plot "depth" (plots/gnuplot_heatmap.cpp): a heatmap panel per line, test length × key depth,
//     the metric as colour on a fixed palette, the end of the training lengths a dashed line.
#include <filesystem>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"

namespace lenlab {

struct PlotOptions {
  // The program to run: a name searched in PATH, or a path when it contains a '/'.
  std::string gnuplot = "gnuplot";
};

// A reference curve drawn dashed in black/grey over the measured lines (e.g. a closed-form
// prediction), named in the key by its label.
struct TheoryCurve {
  std::string label;
  std::vector<int> lengths;
  std::vector<double> mse;  // [lengths]
};

// Writes <dir>/fig<NAME>.dat and <dir>/fig<NAME>.gp, then runs gnuplot on the script when it can
// be found. Returns true when both fig<NAME>.png and fig<NAME>.svg were written, false when gnuplot
// is missing. Images from an earlier render are removed first, so the images on disk always match
// the .dat or are absent. A gnuplot that runs but fails is a UsageError with its error line.
// `fig.spec` must be set, with a metric (its name, title, vary, plot and metric are drawn).
bool render_figure(const FigureSummary& fig, const std::filesystem::path& dir,
                   const PlotOptions& opt, const std::vector<TheoryCurve>& theory = {});

// Runs gnuplot on <dir>/<base>.gp, which writes <base>.png and .svg (removed first); false when
// gnuplot is missing, a UsageError with its error line when it fails.
bool run_gnuplot_script(const std::filesystem::path& dir, const std::string& base,
                        const PlotOptions& opt);

// Whether opt.gnuplot names an executable file (searched in PATH unless it contains a '/').
bool gnuplot_available(const PlotOptions& opt);

// Before long work: draws a one-line test figure with opt.gnuplot (both terminals the figures use)
// in a scratch folder. False when gnuplot is missing; a UsageError with its error line when it
// runs but fails.
bool check_gnuplot(const PlotOptions& opt);

// One line for the user when gnuplot is missing: how to install it and redraw the figures of
// `dir` with `lenlab plot`.
std::string gnuplot_missing_message(const std::filesystem::path& dir);

// The script and data of a figure without touching the disk (render_figure writes these); the
// script reads "fig<NAME>.dat" and writes "fig<NAME>.png"/".svg" relative to the current folder.
std::string figure_dat(const FigureSummary& fig, const std::vector<TheoryCurve>& theory);
std::string figure_gnuplot_script(const FigureSummary& fig, const std::vector<TheoryCurve>& theory);

// `text` as a gnuplot single-quoted string literal. Single quotes, not double: gnuplot runs
// `backquoted` shell commands inside double-quoted strings, and a figure label must never do that.
std::string gnuplot_quote(const std::string& text);

}  // namespace lenlab
