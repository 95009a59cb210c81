#include "plots/gnuplot_distance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/atomic_file.hpp"
#include "plots/gnuplot_parts.hpp"
#include "train/train_spec.hpp"

namespace lenlab {

namespace {

using gnuplot_parts::line_colour;
using gnuplot_parts::spec_of;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One run's curve at its longest length for layer l: per distance the mean over heads (and over
// the length's depth cells); NaN where no head has the distance.
std::vector<double> run_curve(const RunRecord& r, int l) {
  if (r.results.empty()) return {};
  const int longest = r.results.back().length;
  std::vector<double> sum, n;
  for (const LengthResult& row : r.results) {
    const AttentionLogits& a = row.logits;
    if (row.length != longest || a.max_distance < 0 || l >= a.n_layer) continue;
    if (static_cast<int>(sum.size()) < a.max_distance + 1) {
      sum.resize(a.max_distance + 1, 0.0);
      n.resize(a.max_distance + 1, 0.0);
    }
    for (int h = 0; h < a.n_head; ++h)
      for (int d = 0; d <= a.max_distance; ++d)
        if (const double v = a.at(l, h, d); !std::isnan(v)) {
          sum[d] += v;
          n[d] += 1;
        }
  }
  std::vector<double> out(sum.size(), kNaN);
  for (size_t d = 0; d < sum.size(); ++d)
    if (n[d] > 0) out[d] = sum[d] / n[d];
  return out;
}

int n_layers(const FigureSummary& fig) {
  int L = 0;
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs)
      for (const LengthResult& row : r->results) L = std::max(L, row.logits.n_layer);
  return L;
}

// The block of line i, layer l in the .dat: blocks are laid out line-major.
int block_of(size_t i, int l, int L) {
  return static_cast<int>(i) * L + l;
}

}  // namespace

bool has_distance_logits(const FigureSummary& fig) {
  return n_layers(fig) > 0;
}

std::string distance_dat(const FigureSummary& fig) {
  const int L = n_layers(fig);
  std::string out =
      "# lenlab: mean centred attention logit by relative distance at the longest test length\n"
      "# one block per (line, layer), line-major: distance, mean over seeds, min, max\n";
  for (size_t i = 0; i < fig.lines.size(); ++i)
    for (int l = 0; l < L; ++l) {
      out += fmt::format("# line {} layer {}\n", fig.lines[i].label, l);
      std::vector<std::vector<double>> curves;
      size_t D = 0;
      for (const RunRecord* r : fig.lines[i].runs) {
        curves.push_back(run_curve(*r, l));
        D = std::max(D, curves.back().size());
      }
      bool any = false;
      for (size_t d = 0; d < D; ++d) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        int n = 0;
        for (const std::vector<double>& c : curves)
          if (d < c.size() && !std::isnan(c[d])) {
            sum += c[d];
            lo = std::min(lo, c[d]);
            hi = std::max(hi, c[d]);
            ++n;
          }
        if (n == 0) continue;
        out += fmt::format("{} {:.9g} {:.9g} {:.9g}\n", d, sum / n, lo, hi);
        any = true;
      }
      if (!any) out += "0 NaN NaN NaN\n";  // an empty block keeps the numbering
      out += "\n\n";
    }
  return out;
}

std::string distance_script(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const int L = std::max(1, n_layers(fig));
  const std::string base = "fig" + spec.name + "-distance";
  std::string s = "# lenlab figure " + gnuplot_parts::comment_text(spec.name) +
                  ", attention logits by relative distance\n# Redraw from this folder with "
                  "`gnuplot " +
                  gnuplot_parts::comment_text(base) + ".gp`.\n";
  s += "set encoding utf8\n";
  s += "set border 3 linewidth 1.0\nset tics nomirror out scale 0.6\n";
  s += "set grid xtics ytics back linetype 1 linecolor rgb '#d8d8d8' linewidth 0.8\n";
  s += "set style fill transparent solid 0.18 noborder\n";
  s += "set key outside below center horizontal Left reverse noenhanced samplen 2.5\n";
  s += "set xlabel 'relative distance (tokens back), at the longest test length' offset 0,0.3\n";
  s += "set ylabel 'centred attention logit (mean over heads)'\n";
  // Distances seen in training: below the tokens of a sequence at l_train (the first line's).
  const TrainSpec& first = fig.lines.empty() ? spec.base : fig.lines.front().spec;
  const int64_t window = tokens_per_sequence(parse_task(first.task), first.token, first.l_train);
  std::string panels;
  for (int l = 0; l < L; ++l) {
    panels += fmt::format("set title 'layer {}'\n", l);
    panels += fmt::format(
        "set object 1 rectangle from first 0, graph 0 to first {}, graph 1 behind fillcolor rgb "
        "'#e6e6e6' fillstyle solid 1.0 noborder\n",
        window - 1);
    std::string plot = "plot ";
    for (size_t i = 0; i < fig.lines.size(); ++i)
      plot += fmt::format(
          "'{}.dat' index {} using 1:3:4 with filledcurves linecolor rgb '{}' notitle, ", base,
          block_of(i, l, L), line_colour(i));
    for (size_t i = 0; i < fig.lines.size(); ++i)
      plot += fmt::format(
          "'{}.dat' index {} using 1:2 with lines linewidth 2 linecolor rgb '{}' "
          "title {}, ",
          base, block_of(i, l, L), line_colour(i),
          gnuplot_quote(gnuplot_parts::line_title(spec, fig.lines[i])));
    plot += "NaN with boxes fillcolor rgb '#e6e6e6' title 'distances seen in training'\n";
    panels += plot;
  }
  const int width = 560 * L;
  s += fmt::format("\nset terminal pngcairo size {},520 enhanced font 'sans,11'\n", width);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".png"));
  const std::string multiplot = fmt::format(
      "set multiplot layout 1,{} title {} noenhanced font ',12'\n", L,
      gnuplot_quote(gnuplot_parts::figure_title(spec) + ": attention logits by distance"));
  s += multiplot + panels + "unset multiplot\n";
  s += fmt::format(
      "\nset terminal svg size {},520 enhanced font 'sans,11' background rgb 'white'\n", width);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".svg"));
  s += multiplot + panels + "unset multiplot\nset output\n";
  return s;
}

bool render_distance_figure(const FigureSummary& fig, const std::filesystem::path& dir,
                            const PlotOptions& opt) {
  const std::string base = "fig" + spec_of(fig).name + "-distance";
  write_file_atomic(dir / (base + ".dat"), distance_dat(fig));
  write_file_atomic(dir / (base + ".gp"), distance_script(fig));
  return run_gnuplot_script(dir, base, opt);
}

}  // namespace lenlab
