#pragma once
// A figure's per-layer companions, drawn when its runs measured their attention
// (attention_stats = 1): one panel per layer (columns) and quantity (rows), per line the mean over
// heads, then over seeds, with the seeds' min–max band (passkey: the mean over its depth cells).
//  * fig<NAME>-layers.{dat,gp,png,svg}: the mean attention entropy and the mean largest attention
//    probability against test length (attention.csv), the training lengths shaded;
//  * fig<NAME>-distance.{dat,gp,png,svg}: the mean centred attention logit against relative
//    distance at the line's longest test length (attention_distance.csv;
//    train/attention_probe.hpp), the distances seen in training shaded;
//  * fig<NAME>-bias.{dat,gp,png,svg}: the positional encoding's bias b_h(δ) on the logits against
//    distance after training (position_bias.csv; results/position_bias_file.hpp), one row of panels
//    per head: paper 002's Figure 1 on lenlab's models, for every line with a bias (alibi, t5,
//    kerple).
#include <filesystem>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

enum class LayerFigure { kStatistics, kDistance, kBias };

// Whether the companion has a line to draw: one whose runs all have its data (the bias: not
// ALiBi's fixed slopes alone, which need no figure).
bool has_layer_figure(const FigureSummary& fig, LayerFigure which);
// The lines of which some runs have what the companion draws and others do not (a run record
// without the file: docs/data's runs/ keep manifest.json and results.csv only). Such a line is
// left out of the companion, never drawn from part of its seeds; report.md names it.
std::vector<std::string> partial_layer_lines(const FigureSummary& fig, LayerFigure which);
// "layers", "distance" or "bias": the companion's file suffix.
std::string layer_figure_suffix(LayerFigure which);
std::string layer_figure_dat(const FigureSummary& fig, LayerFigure which);
std::string layer_figure_script(const FigureSummary& fig, LayerFigure which);
// Writes the .dat and .gp into `dir` and runs gnuplot as render_figure does (false: no gnuplot).
bool render_layer_figure(const FigureSummary& fig, LayerFigure which,
                         const std::filesystem::path& dir, const PlotOptions& opt);

}  // namespace lenlab
