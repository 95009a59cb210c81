#pragma once
// A figure's companion fig<NAME>-distance.{dat,gp,png,svg}, drawn when its runs measured their
// attention logits (attention_stats = 1; train/attention_probe.hpp): one panel per layer, per line
// the mean centred attention logit against relative distance at the line's longest test length
// (the mean over heads, then over seeds, with the seeds' min–max band; passkey: the mean over its
// depth cells), the distances seen in training shaded.
#include <filesystem>
#include <string>

#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

// Whether any run of the figure has logits by distance.
bool has_distance_logits(const FigureSummary& fig);
std::string distance_dat(const FigureSummary& fig);
std::string distance_script(const FigureSummary& fig);
// Writes the .dat and .gp into `dir` and runs gnuplot as render_figure does (false: no gnuplot).
bool render_distance_figure(const FigureSummary& fig, const std::filesystem::path& dir,
                            const PlotOptions& opt);

}  // namespace lenlab
