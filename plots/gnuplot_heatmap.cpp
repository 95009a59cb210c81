// Passkey's depth figures (plot "depth"): per line a heatmap of the metric over (test length, the
// key's depth), one panel per line in a gnuplot multiplot. Cells are drawn as boxes
// (`boxxyerror`), each reaching half-way to its neighbours, so irregular test lengths
// ("5..20,32,64") and depths keep their places on the axes; gnuplot's `with image` needs an even
// grid.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "results/figure_metric.hpp"

namespace lenlab::gnuplot_parts {

namespace {

// Viridis, sampled: even in lightness and colour-blind friendly. Fixed, with a fixed range for
// accuracy and exact match, so a colour means the same value in every such heatmap.
constexpr const char* kPalette =
    "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21908d', 0.75 '#5dc963', "
    "1 '#fde725')\n";

struct Span {
  double lo = 0, hi = 1;
};

// Each centre's cell (centres ascending): half-way to its neighbours, an end cell as wide on its
// outer side as on its inner one, a lone centre ± lone_half.
std::vector<Span> cells_of(const std::vector<double>& centres, double lone_half) {
  const size_t n = centres.size();
  std::vector<Span> out(n);
  const auto gap = [&](size_t k) { return (centres[k + 1] - centres[k]) / 2; };  // k, k+1
  for (size_t i = 0; i < n; ++i) {
    const double left = i > 0 ? gap(i - 1) : n > 1 ? gap(0) : lone_half;
    const double right = i + 1 < n ? gap(i) : n > 1 ? gap(n - 2) : lone_half;
    out[i] = {centres[i] - left, centres[i] + right};
  }
  return out;
}

struct Panel {
  int block = -1;       // the line's index in the .dat; -1: no cell with data
  Span x, y;            // the axes' ranges: the outer edges of the cells
  double boundary = 0;  // x of the training boundary: the right edge of the last length <= l_train
};

// What the .dat and the .gp agree on: the blocks, the panels' ranges and the colour range.
struct HeatLayout {
  std::vector<Panel> panels;  // per FigureLine
  std::string dat;            // the data blocks
  double colour_max = 1;      // the top of the colour range ([0, 1] for fractions)
  int cols = 1, rows = 1;
};

HeatLayout heat_layout(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  HeatLayout h;
  double max_value = 0;
  int block = 0;
  for (const FigureLine& line : fig.lines) {
    Panel p;
    const size_t n_depths = line.depths.size();
    const std::vector<Span> xs = cells_of({line.x.begin(), line.x.end()}, 0.5);
    const std::vector<Span> ys = cells_of(line.depths, 0.5);
    std::string rows;
    for (size_t i = 0; i < line.x.size() && n_depths > 0; ++i)
      for (size_t j = 0; j < n_depths; ++j) {
        const double v = i * n_depths + j < line.grid.size()
                             ? line.grid[i * n_depths + j]
                             : std::numeric_limits<double>::quiet_NaN();
        if (!std::isfinite(v)) continue;
        rows += fmt::format("{} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g}\n", line.x[i],
                            line.depths[j], v, xs[i].lo, xs[i].hi, ys[j].lo, ys[j].hi);
        max_value = std::max(max_value, v);
      }
    if (!rows.empty()) {
      if (block > 0) h.dat += "\n\n";
      h.dat += fmt::format(
          "# {} (l_train {}): length depth value length_from length_to "
          "depth_from depth_to\n",
          comment_text(line_title(spec, line)), line.spec.l_train);
      h.dat += rows;
      p.block = block++;
      p.x = {xs.front().lo, xs.back().hi};
      p.y = {ys.front().lo, ys.back().hi};
      p.boundary = p.x.lo;
      for (size_t i = 0; i < line.x.size(); ++i)
        if (line.x[i] <= line.spec.l_train) p.boundary = xs[i].hi;
    } else {
      p.x = {0.5, std::max(1, line.spec.l_test) + 0.5};
    }
    h.panels.push_back(p);
  }
  if (!metric_is_fraction(spec.metric)) h.colour_max = max_value > 0 ? max_value : 1;
  const int n = std::max<int>(1, static_cast<int>(fig.lines.size()));
  h.cols = n <= 3 ? n : static_cast<int>(std::ceil(std::sqrt(n)));
  h.rows = (n + h.cols - 1) / h.cols;
  return h;
}

// The panels, drawn once per terminal.
std::string multiplot(const FigureSummary& fig, const HeatLayout& h) {
  const FigureSpec& spec = spec_of(fig);
  std::string s = fmt::format("set multiplot layout {},{} title {} noenhanced font ',12'\n", h.rows,
                              h.cols, gnuplot_quote(figure_title(spec)));
  if (fig.lines.empty())
    s += "set label 1 'no data: no completed run' at graph 0.5, graph 0.5 center "
         "textcolor rgb '#808080'\nplot NaN notitle\nunset label 1\n";
  for (size_t i = 0; i < fig.lines.size(); ++i) {
    const FigureLine& line = fig.lines[i];
    const Panel& p = h.panels[i];
    s += fmt::format("# {}\n", comment_text(line_title(spec, line)));
    s += fmt::format("set title {} noenhanced\n", gnuplot_quote(line_title(spec, line)));
    s += fmt::format("set xrange [{:.6g}:{:.6g}]\nset yrange [{:.6g}:{:.6g}]\n", p.x.lo, p.x.hi,
                     p.y.lo, p.y.hi);
    if (p.block < 0) {
      s += "set xlabel 'test length'\nset ytics autofreq\n"
           "set label 1 'no data: no completed run' at graph 0.5, graph 0.5 center "
           "textcolor rgb '#808080'\nplot NaN notitle\nunset label 1\n";
      continue;
    }
    s += fmt::format(
        "set xlabel {} noenhanced\n",
        gnuplot_quote(fmt::format("test length (dashed: l_train = {})", line.spec.l_train)));
    // The tested depths as tics when they are few (the default five), else gnuplot's own.
    if (line.depths.size() <= 11) {
      std::string tics;
      for (const double d : line.depths) tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", d);
      s += "set ytics (" + tics + ")\n";
    } else {
      s += "set ytics autofreq\n";
    }
    // A black line under a white dashed one: visible on every colour of the palette.
    s += fmt::format(
        "set arrow 1 from first {0:.6g}, graph 0 to first {0:.6g}, graph 1 nohead front "
        "linewidth 3 linecolor rgb 'black'\n"
        "set arrow 2 from first {0:.6g}, graph 0 to first {0:.6g}, graph 1 nohead front "
        "linewidth 1.5 dashtype 2 linecolor rgb 'white'\n",
        p.boundary);
    s += fmt::format(
        "plot {} index {} using 1:2:4:5:6:7:3 with boxxyerror linecolor palette linewidth 0.5 "
        "notitle\n",
        gnuplot_quote(dat_name(spec)), p.block);
    s += "unset arrow\n";
  }
  return s + "unset multiplot\n";
}

}  // namespace

std::string heatmap_dat(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const HeatLayout h = heat_layout(fig);
  std::string out =
      fmt::format("# lenlab figure {}: {}\n", comment_text(spec.name), comment_text(spec.title));
  out += fmt::format(
      "# A heatmap per line: {}, mean over seeds, per (test length, key depth) cell.\n"
      "# One block per line with data (gnuplot `index`, in this order), two blank lines between "
      "blocks.\n"
      "# Columns: length, depth, value, then the cell's extent: length from, to, depth from, "
      "to.\n"
      "# Cells no run has are left out, and so are cells at random depths (no place on the "
      "axis).\n",
      metric_label(spec.metric));
  for (size_t i = 0; i < fig.lines.size(); ++i)
    if (h.panels[i].block < 0)
      out += fmt::format("# {}: no data, no block\n", comment_text(line_title(spec, fig.lines[i])));
  return out + "\n" + h.dat;
}

std::string heatmap_script(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const HeatLayout h = heat_layout(fig);
  const std::string base = "fig" + spec.name;
  std::string s = script_intro(spec);
  s += fmt::format(
      "# A panel per line: x = test length, y = the key's depth (0: right after BOS, 1: right\n"
      "# before SEP), colour = {} (mean over seeds; white: not tested). Cells left of\n"
      "# the dashed line are the training lengths 1..l_train.\n",
      comment_text(metric_label(spec.metric)));
  s += "set encoding utf8\n";
  s += kPalette;
  s += fmt::format("set cbrange [0:{:.6g}]\n", h.colour_max);
  s += fmt::format("set cblabel {} noenhanced\n", gnuplot_quote(metric_label(spec.metric)));
  s += "set ylabel 'key depth'\n";
  // Filled and bordered in the cell's own colour: without the border, anti-aliasing leaves thin
  // white seams between neighbouring cells.
  s += "set style fill solid 1.0 border\n";
  s += "set tics out nomirror scale 0.6\nunset key\n";
  const int width = 60 + 400 * h.cols, height = 40 + 340 * h.rows;
  const std::string panels = multiplot(fig, h);
  s += "\n";
  s += gnuplot_style::png_terminal(width, height, 10);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".png"));
  s += panels;
  s += "\n# The same panels again for the SVG (a multiplot cannot be replotted).\n";
  s += gnuplot_style::svg_terminal(width, height, 10);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".svg"));
  s += panels;
  return s + "set output\n";
}

}  // namespace lenlab::gnuplot_parts
