// Passkey's depth figures (plot "depth"): per line a heatmap of the metric over (test length, the
// key's depth), one panel per line in a gnuplot multiplot. Each tested length is a column and
// each tested depth a row, all of one width (height): cell k spans k - 0.5 .. k + 0.5, half-way to
// its neighbours, and its tic sits at its centre k, labelled with the length (depth). Irregular
// lengths ("5..12,16,24,32,48") get columns as wide as regular ones: on an axis of lengths their
// cells would be 1 and 16 wide and could not be centred on their tics both; the tic labels say
// which length each column is. Cells are boxes (`boxxyerror`), so a cell no run has stays white.
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

struct Panel {
  int block = -1;       // the line's index in the .dat; -1: no cell with data
  double boundary = 0;  // x of the dashed line: the right edge of the last column <= l_train
};

// What the .dat and the .gp agree on: the blocks, the panels and the colour range.
struct HeatLayout {
  std::vector<Panel> panels;  // per FigureLine
  std::string dat;            // the data blocks
  double colour_max = 1;      // the top of the colour range ([0, 1] for fractions)
  int cols = 1, rows = 1;
};

// The training boundary of a panel whose columns are `lengths` (ascending): lengths <= l_train
// were trained on, so the line goes between the column of the last such length and the next
// (the right edge of the one, the left edge of the other), never through a cell; the panel's
// x label says "after l_train = N". Before the first column when none was trained on.
double training_boundary(const std::vector<int>& lengths, int l_train) {
  const auto trained = std::upper_bound(lengths.begin(), lengths.end(), l_train) - lengths.begin();
  return static_cast<double>(trained) - 0.5;
}

HeatLayout heat_layout(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  HeatLayout h;
  double max_value = 0;
  int block = 0;
  for (const FigureLine& line : fig.lines) {
    Panel p;
    const size_t n_depths = line.depths.size();
    std::string rows;
    for (size_t i = 0; i < line.x.size() && n_depths > 0; ++i)
      for (size_t j = 0; j < n_depths; ++j) {
        const double v = i * n_depths + j < line.grid.size()
                             ? line.grid[i * n_depths + j]
                             : std::numeric_limits<double>::quiet_NaN();
        if (!std::isfinite(v)) continue;
        rows += fmt::format("{} {:.9g} {:.9g} {} {} {:g} {:g} {:g} {:g}\n", line.x[i],
                            line.depths[j], v, i, j, i - 0.5, i + 0.5, j - 0.5, j + 0.5);
        max_value = std::max(max_value, v);
      }
    if (!rows.empty()) {
      if (block > 0) h.dat += "\n\n";
      h.dat += fmt::format(
          "# {} (l_train {}): length depth value column row column_from column_to row_from "
          "row_to\n",
          comment_text(line_title(spec, line)), line.spec.l_train);
      h.dat += rows;
      p.block = block++;
      p.boundary = training_boundary(line.x, line.spec.l_train);
    }
    h.panels.push_back(p);
  }
  if (!metric_is_fraction(spec.metric)) h.colour_max = max_value > 0 ? max_value : 1;
  const int n = std::max<int>(1, static_cast<int>(fig.lines.size()));
  // Two panels a row at most: at the page's width a third leaves too little room between its
  // text for the cells.
  h.cols = std::min(n, 2);
  h.rows = (n + h.cols - 1) / h.cols;
  return h;
}

// The canvas: the page's width, h.cols × h.rows panels; a lone panel no taller than 0.55 of the
// width (it would fill the screen).
gnuplot_style::Canvas heat_canvas(const HeatLayout& h) {
  const double width = gnuplot_style::kPageWidthPx, panel_w = width / h.cols;
  const double panel_h = std::min(0.85 * panel_w, 0.55 * width);
  return gnuplot_style::canvas(gnuplot_style::kPageWidthPx,
                               static_cast<int>(std::lround(60 + h.rows * panel_h)));
}

// An axis' tics: one per tested value at its cell's centre (0, 1, …), labelled with the value.
// When the labels would not fit along `room` px (`label_px` each), every step-th is labelled,
// counted away from the boundary between cells `split` - 1 and `split` both ways (so that the
// columns either side of the training boundary keep theirs), the others minor tics.
std::string tics(const char* axis, const std::vector<std::string>& labels, double room,
                 double label_px, size_t split) {
  const size_t n = labels.size();
  const auto labelled = [split](size_t k, size_t step) {
    return (k < split ? split - 1 - k : k - split) % step == 0;
  };
  size_t step = 1;
  for (;; ++step) {
    size_t count = 0;
    for (size_t k = 0; k < n; ++k) count += labelled(k, step);
    if (step >= n || static_cast<double>(count) * label_px <= room) break;
  }
  std::string list;
  for (size_t k = 0; k < n; ++k)
    list +=
        fmt::format("{}{} {}{}", k ? ", " : "", gnuplot_quote(labelled(k, step) ? labels[k] : ""),
                    k, labelled(k, step) ? "" : " 1");
  return fmt::format("set {} ({})\n", axis, list);
}

// The panels, drawn once per terminal.
std::string multiplot(const FigureSummary& fig, const HeatLayout& h,
                      const gnuplot_style::Canvas& c) {
  const FigureSpec& spec = spec_of(fig);
  std::string s = fmt::format("set multiplot layout {},{} title {} noenhanced {}\n", h.rows, h.cols,
                              gnuplot_quote(figure_title(spec)), c.title_font());
  if (fig.lines.empty())
    s += "set label 1 'no data: no completed run' at graph 0.5, graph 0.5 center "
         "textcolor rgb '#808080'\nplot NaN notitle\nunset label 1\n";
  // The room for tic labels in a panel: its width less the y tics and label on the left and the
  // colour box, its tics and label on the right; its height less the title, the x tics and the
  // two lines of the x label. A label needs its characters (0.64 of the font's size, a digit of
  // DejaVu Sans) and a gap along x, a line and a gap along y.
  const double t = c.text_px;
  const double room_x = c.width / static_cast<double>(h.cols) - 12.5 * t;
  const double room_y = (c.height - 2.0 * t) / h.rows - 6.5 * t;
  for (size_t i = 0; i < fig.lines.size(); ++i) {
    const FigureLine& line = fig.lines[i];
    const Panel& p = h.panels[i];
    s += fmt::format("# {}\n", comment_text(line_title(spec, line)));
    s += fmt::format("set title {} noenhanced\n", gnuplot_quote(line_title(spec, line)));
    if (p.block < 0) {
      s += fmt::format(
          "set xrange [0.5:{}.5]\nset yrange [0:1]\nset xlabel 'test length'\n"
          "set xtics autofreq\nset ytics autofreq\n"
          "set label 1 'no data: no completed run' at graph 0.5, graph 0.5 center "
          "textcolor rgb '#808080'\nplot NaN notitle\nunset label 1\n",
          std::max(1, line.spec.l_test));
      continue;
    }
    s += fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n", line.x.size() - 0.5,
                     line.depths.size() - 0.5);
    // The dashed line and the label say the same: it sits right after the column of l_train.
    s += fmt::format("set xlabel 'test length'.\"\\n\".{} noenhanced\n",
                     gnuplot_quote(fmt::format("dashed: after l_train = {}", line.spec.l_train)));
    std::vector<std::string> lengths, depths;
    size_t widest = 1;
    for (const int x : line.x) {
      lengths.push_back(fmt::format("{}", x));
      widest = std::max(widest, lengths.back().size());
    }
    for (const double d : line.depths) depths.push_back(fmt::format("{:g}", d));
    s += tics("xtics", lengths, room_x, (0.64 * static_cast<double>(widest) + 0.8) * t,
              static_cast<size_t>(p.boundary + 0.5));
    s += tics("ytics", depths, room_y, 1.5 * t, 0);
    // A black line under a white dashed one: visible on every colour of the palette.
    s += fmt::format(
        "set arrow 1 from first {0:g}, graph 0 to first {0:g}, graph 1 nohead front "
        "linewidth 3 linecolor rgb 'black'\n"
        "set arrow 2 from first {0:g}, graph 0 to first {0:g}, graph 1 nohead front "
        "linewidth 1.5 dashtype 2 linecolor rgb 'white'\n",
        p.boundary);
    s += fmt::format(
        "plot {} index {} using 4:5:6:7:8:9:3 with boxxyerror linecolor palette linewidth 0.5 "
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
      "# Columns: length, depth, value, then the cell's place: its column (the length's index "
      "among the\n"
      "# tested lengths) and row (the depth's), and its extent, column from, to, row from, to.\n"
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
  const gnuplot_style::Canvas c = heat_canvas(h);
  const std::string base = "fig" + spec.name;
  std::string s = script_intro(spec);
  s += fmt::format(
      "# A panel per line: x = test length, y = the key's depth (0: right after BOS, 1: right\n"
      "# before SEP), a column per tested length and a row per depth, each tic at its cell's\n"
      "# centre; colour = {} (mean over seeds; white: not tested). The dashed line\n"
      "# sits between the column of l_train and the next: the cells left of it are the lengths\n"
      "# trained on (<= l_train).\n",
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
  const std::string panels = multiplot(fig, h, c);
  s += "\n";
  s += gnuplot_style::png_terminal(c);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".png"));
  s += panels;
  s += "\n# The same panels again for the SVG (a multiplot cannot be replotted).\n";
  s += gnuplot_style::svg_terminal(c);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".svg"));
  s += panels;
  return s + "set output\n";
}

}  // namespace lenlab::gnuplot_parts
