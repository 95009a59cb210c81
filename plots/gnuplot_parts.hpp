#pragma once
// Pieces shared by plots/gnuplot.cpp (curves against length or position),
// plots/gnuplot_heatmap.cpp (passkey's length × depth heatmaps) and plots/gnuplot_scatter.cpp
// (misalignment against the metric far past training) and plots/gnuplot_temperature.cpp (the
// metric against the attention temperature), and report/representation_report.cpp's figure (the
// line palette); not part of the plots/ API.
#include <iterator>
#include <stdexcept>
#include <string>

#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab::gnuplot_parts {

// Text that goes into a comment of the .gp or .dat: one line, and no trailing backslash, which
// gnuplot would read as "the comment continues on the next line".
inline std::string comment_text(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  while (!s.empty() && s.back() == '\\') s.pop_back();
  return s;
}

// The figure's spec; what is drawn depends on its plot and metric, so both must be set.
inline const FigureSpec& spec_of(const FigureSummary& fig) {
  if (!fig.spec) throw std::invalid_argument("render_figure: FigureSummary without a FigureSpec");
  if (fig.spec->metric.empty())
    throw std::invalid_argument("render_figure: figure '" + fig.spec->name + "' has no metric");
  return *fig.spec;
}

// Distinct and colour-blind friendly (matplotlib's tab10 without its grey, which the theory
// curves use), then five dark tones of tab20b for figures of more lines (004-C2 against its oracle
// has 10: with 9 colours its tenth line took the oracle's); repeats after 14 lines.
inline constexpr const char* kLinePalette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"};
inline const char* line_colour(size_t i) {
  return kLinePalette[i % std::size(kLinePalette)];
}

inline std::string line_title(const FigureSpec& spec, const FigureLine& line) {
  if (line.pooled) return line.label;                 // already "figure: value"
  if (spec.vary == kVarySettings) return line.label;  // the line's own name
  return spec.vary + " = " + line.label;
}

inline std::string dat_name(const FigureSpec& spec) {
  return "fig" + spec.name + ".dat";
}

inline std::string figure_title(const FigureSpec& spec) {
  return spec.title.empty() ? "Figure " + spec.name : spec.title;
}

// The first lines of a .gp: what it is and how to redraw it by hand.
inline std::string script_intro(const FigureSpec& spec) {
  const std::string base = comment_text("fig" + spec.name);
  return "# lenlab figure " + comment_text(spec.name) + ": " + comment_text(spec.title) + "\n" +
         "# Redraw from this folder with `gnuplot " + base + ".gp`: reads " + base +
         ".dat, writes " + base + ".png and " + base + ".svg.\n";
}

// plot "depth": the .dat and .gp of the heatmaps (plots/gnuplot_heatmap.cpp).
std::string heatmap_dat(const FigureSummary& fig);
std::string heatmap_script(const FigureSummary& fig);
// plot "misalignment": the .dat and .gp of the scatter (plots/gnuplot_scatter.cpp).
std::string scatter_dat(const FigureSummary& fig);
std::string scatter_script(const FigureSummary& fig);
// plot "temperature": the .dat and .gp of the τ curves (plots/gnuplot_temperature.cpp).
std::string temperature_dat(const FigureSummary& fig);
std::string temperature_script(const FigureSummary& fig);

}  // namespace lenlab::gnuplot_parts
