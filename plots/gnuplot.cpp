#include "plots/gnuplot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "results/figure_metric.hpp"

namespace lenlab {
namespace fs = std::filesystem;

namespace {

using gnuplot_parts::comment_text;
using gnuplot_parts::dat_name;
using gnuplot_parts::line_colour;
using gnuplot_parts::line_title;
using gnuplot_parts::spec_of;

// A log axis cannot show 0 (a run that is exactly right at some length): values below this floor
// are drawn at it. It sits orders of magnitude under the MSEs the paper's figures compare, and
// the .dat and .gp both say so.
constexpr double kMseFloor = 1e-12;

constexpr const char* kTheoryColours[] = {"#000000", "#606060", "#a0a0a0"};
constexpr const char* kTrainShade = "#e6e6e6";

// What both the .dat and the .gp need to agree on: which data block holds which curve, and the
// axis ranges (computed here, not by gnuplot, so a log y axis always spans whole decades and its
// 10^n labels are exact).
struct Layout {
  std::vector<int> line_block;    // per FigureLine: its index in the .dat, -1 when it has no point
  std::vector<int> theory_block;  // per TheoryCurve, the same
  std::string dat;                // the .dat's data blocks
  int x_max = 2;
  bool log_y = true;        // the MSE: log axis, values floored at kMseFloor; else linear
  int y_lo = -6, y_hi = 0;  // log_y: decades: the y axis spans 10^y_lo .. 10^y_hi
  double lo = 0, hi = 1;    // !log_y: the smallest and largest value drawn
  bool any_point = false;
};

class BlockWriter {
 public:
  explicit BlockWriter(Layout& layout) : layout_(layout) {}

  // A block per curve: begin, row…, end, which returns its index (-1 when it got no row).
  void begin(const std::string& header) {
    header_ = header;
    rows_ = 0;
    gap_ = false;
  }
  // A row of x and values (all drawn on the y axis); a non-finite value skips the row and breaks
  // the curve there (one blank line) rather than joining its neighbours across the gap.
  void row(int x, std::initializer_list<double> values) {
    for (double v : values)
      if (!std::isfinite(v)) {
        gap_ = true;
        return;
      }
    if (rows_ == 0) {
      if (block_ > 0) layout_.dat += "\n\n";
      layout_.dat += "# " + comment_text(header_) + "\n";
    } else if (gap_) {
      layout_.dat += "\n";
    }
    gap_ = false;
    layout_.dat += fmt::format("{}", x);
    for (double v : values) {
      if (layout_.log_y) v = std::max(v, kMseFloor);
      layout_.dat += fmt::format(" {:.9g}", v);
      lo_ = std::min(lo_, v);
      hi_ = std::max(hi_, v);
    }
    layout_.dat += "\n";
    layout_.x_max = std::max(layout_.x_max, x);
    ++rows_;
  }
  int end() { return rows_ > 0 ? block_++ : -1; }

  void finish() {
    layout_.any_point = block_ > 0;
    if (!layout_.any_point) return;
    if (!layout_.log_y) {
      layout_.lo = lo_;
      layout_.hi = hi_;
      return;
    }
    layout_.y_lo = static_cast<int>(std::floor(std::log10(lo_)));
    layout_.y_hi = static_cast<int>(std::ceil(std::log10(hi_)));
    if (layout_.y_hi <= layout_.y_lo) layout_.y_hi = layout_.y_lo + 1;
  }

 private:
  Layout& layout_;
  std::string header_;
  int rows_ = 0, block_ = 0;
  bool gap_ = false;
  double lo_ = std::numeric_limits<double>::infinity(), hi_ = -lo_;
};

bool by_position(const FigureSpec& spec) {
  return spec.plot == "position";
}

// The x axis' quantity, as the .dat's column and block headers name it.
const char* x_name(const FigureSpec& spec) {
  return by_position(spec) ? "position" : "length";
}

Layout make_layout(const FigureSummary& fig, const std::vector<TheoryCurve>& theory) {
  const FigureSpec& spec = spec_of(fig);
  Layout layout;
  layout.log_y = spec.metric == "mse";
  BlockWriter w(layout);
  for (const FigureLine& line : fig.lines) {
    layout.x_max = std::max(layout.x_max, line.spec.l_test);
    w.begin(fmt::format("{} (l_train {}): {} mean min max", line_title(spec, line),
                        line.spec.l_train, x_name(spec)));
    const size_t n = std::min(
        {line.x.size(), line.value_mean.size(), line.value_min.size(), line.value_max.size()});
    for (size_t k = 0; k < n; ++k)
      w.row(line.x[k], {line.value_mean[k], line.value_min[k], line.value_max[k]});
    layout.line_block.push_back(w.end());
  }
  for (const TheoryCurve& curve : theory) {
    w.begin(fmt::format("theory: {}: length mse", curve.label));
    const size_t n = std::min(curve.lengths.size(), curve.mse.size());
    for (size_t k = 0; k < n; ++k) w.row(curve.lengths[k], {curve.mse[k]});
    layout.theory_block.push_back(w.end());
  }
  w.finish();
  return layout;
}

// The training range: shaded from 1 to l_train (a position plot: the positions training sequences
// have, 1..l_train). When the lines were trained on different ranges (figure 3 varies l_train) the
// shade stops at the smallest and each line's own l_train is a dashed vertical line in its colour.
// Appends the key entries that explain the shading to `key`.
std::string training_range(const FigureSummary& fig, const Layout& layout,
                           std::vector<std::string>* key) {
  if (fig.lines.empty()) return "";
  int lo = fig.lines.front().spec.l_train, hi = lo;
  for (const FigureLine& line : fig.lines) {
    lo = std::min(lo, line.spec.l_train);
    hi = std::max(hi, line.spec.l_train);
  }
  std::string out = fmt::format(
      "set object 1 rectangle from first 1, graph 0 to first {}, graph 1 behind "
      "fillcolor rgb '{}' fillstyle solid 1.0 noborder\n",
      std::clamp(lo, 1, layout.x_max), kTrainShade);
  const std::string shaded =
      by_position(spec_of(fig)) ? "positions seen in training" : "training lengths";
  key->push_back(
      fmt::format("keyentry with boxes fillcolor rgb '{}' fillstyle solid 1.0 noborder title {}",
                  kTrainShade, gnuplot_quote(lo == hi ? shaded : shaded + " (all lines)")));
  if (lo == hi) return out;
  for (size_t i = 0; i < fig.lines.size(); ++i)
    out += fmt::format(
        "set arrow {} from first {}, graph 0 to first {}, graph 1 nohead back dashtype 2 "
        "linewidth 1.5 linecolor rgb '{}'\n",
        i + 1, fig.lines[i].spec.l_train, fig.lines[i].spec.l_train, line_colour(i));
  key->push_back(
      fmt::format("keyentry with lines dashtype 2 linewidth 1.5 linecolor rgb '#404040' title {}",
                  gnuplot_quote("l_train of each line")));
  return out;
}

// The y axis of the figure's metric: MSE on a log axis of whole decades; accuracy and exact match
// on [0, 1]; cross-entropies linear over the data (from 0, or below it for an excess that dips
// under the chain's own loss).
std::string y_axis(const FigureSpec& spec, const Layout& layout) {
  std::string out = fmt::format("set ylabel {}\n", gnuplot_quote(metric_label(spec.metric)));
  if (layout.log_y) {
    // At most ~8 labelled decades; with more, label every 2nd (3rd…) and keep a minor tic per
    // decade.
    const int decades = layout.y_hi - layout.y_lo;
    const int step = std::max(1, (decades + 7) / 8);
    out += "set logscale y 10\n" + gnuplot_style::log_tic_format("y", true);
    out += fmt::format("set yrange [1e{}:1e{}]\n", layout.y_lo, layout.y_hi);
    out += fmt::format("set ytics 1e{}, 1e{}, 1e{}\n", layout.y_lo, step, layout.y_hi);
    out += step == 1 ? "set mytics 10\n" : fmt::format("set mytics {}\n", step);
    return out;
  }
  if (metric_is_fraction(spec.metric))
    return out + "set yrange [0:1]\nset ytics 0, 0.2, 1\nset mytics 2\n";
  const double lo = layout.any_point ? std::min(0.0, layout.lo) : 0.0;
  const double hi = layout.any_point ? std::max({0.0, layout.hi, lo + 1e-3}) : 1.0;
  const double pad = 0.05 * (hi - lo);
  return out + fmt::format("set yrange [{:.6g}:{:.6g}]\n", lo < 0 ? lo - pad : 0.0, hi + pad);
}

std::string plot_command(const FigureSummary& fig, const std::vector<TheoryCurve>& theory,
                         const Layout& layout, const std::vector<std::string>& key) {
  const FigureSpec& spec = spec_of(fig);
  const std::string data = gnuplot_quote(dat_name(spec));
  std::vector<std::string> parts;
  // Bands first so every mean line is drawn over every band.
  for (size_t i = 0; i < fig.lines.size(); ++i)
    if (layout.line_block[i] >= 0)
      parts.push_back(
          fmt::format("{} index {} using 1:3:4 with filledcurves fillcolor rgb '{}' "
                      "fillstyle transparent solid 0.18 noborder notitle",
                      data, layout.line_block[i], line_colour(i)));
  for (size_t i = 0; i < fig.lines.size(); ++i) {
    const std::string title = gnuplot_quote(line_title(spec, fig.lines[i]));
    if (layout.line_block[i] >= 0)
      parts.push_back(
          fmt::format("{} index {} using 1:2 with lines linewidth 2 linecolor rgb '{}' title {}",
                      data, layout.line_block[i], line_colour(i), title));
    else  // no completed run: still in the key, so a missing line is visibly missing
      parts.push_back(fmt::format("keyentry with lines linewidth 2 linecolor rgb '{}' title {}",
                                  line_colour(i),
                                  gnuplot_quote(line_title(spec, fig.lines[i]) + " (no data)")));
  }
  for (size_t j = 0; j < theory.size(); ++j) {
    if (layout.theory_block[j] < 0) continue;
    parts.push_back(fmt::format(
        "{} index {} using 1:2 with lines dashtype {} linewidth 1.5 linecolor rgb '{}' title {}",
        data, layout.theory_block[j], 2 + j % 3, kTheoryColours[j % std::size(kTheoryColours)],
        gnuplot_quote(theory[j].label)));
  }
  // gnuplot needs one element that plots something: key entries alone (every line without a
  // completed run, as in a folder whose runs are still training) fail its axis setup.
  if (parts.empty() || parts.front().rfind("keyentry", 0) == 0)
    parts.insert(parts.begin(), "NaN notitle");
  parts.insert(parts.end(), key.begin(), key.end());
  std::string out = "plot ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", \\\n     " : "") + parts[i];
  return out + "\n";
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";  // the only escape inside gnuplot single quotes
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += ' ';  // one line per command
    else
      out += c;
  }
  return out + "'";
}

std::string figure_dat(const FigureSummary& fig, const std::vector<TheoryCurve>& theory) {
  const FigureSpec& spec = spec_of(fig);
  if (spec.plot == "depth") return gnuplot_parts::heatmap_dat(fig);
  if (spec.plot == "misalignment") return gnuplot_parts::scatter_dat(fig);
  if (spec.plot == "temperature") return gnuplot_parts::temperature_dat(fig);
  const Layout layout = make_layout(fig, theory);
  const std::string metric = metric_label(spec.metric);
  std::string out =
      fmt::format("# lenlab figure {}: {}\n", comment_text(spec.name), comment_text(spec.title));
  out +=
      "# One block per curve (gnuplot `index`, in this order), two blank lines between blocks.\n";
  if (by_position(spec))
    out += fmt::format(
        "# Lines: position t at the run's longest test length, mean {} over seeds, min and max\n"
        "# over seeds (the band){}.\n",
        metric,
        spec.metric == "excess_ce"
            ? "; excess = cross-entropy - the chain's own loss on the same tokens"
            : "");
  else
    out += fmt::format("# Lines: length, mean {} over seeds, min and max over seeds (the band).\n",
                       metric);
  if (!theory.empty() || layout.log_y) out += fmt::format("# Theory curves: length, {}.\n", metric);
  if (layout.log_y)
    out += fmt::format("# Values below {:g} are written as {:g} (a log axis cannot show 0);\n",
                       kMseFloor, kMseFloor);
  out += "# non-finite values are left out, with a blank line where the curve breaks.\n";
  for (size_t i = 0; i < fig.lines.size(); ++i)
    if (layout.line_block[i] < 0)
      out += fmt::format("# {}: no data, no block\n", comment_text(line_title(spec, fig.lines[i])));
  return out + "\n" + layout.dat;
}

std::string figure_gnuplot_script(const FigureSummary& fig,
                                  const std::vector<TheoryCurve>& theory) {
  const FigureSpec& spec = spec_of(fig);
  if (spec.plot == "depth") return gnuplot_parts::heatmap_script(fig);
  if (spec.plot == "misalignment") return gnuplot_parts::scatter_script(fig);
  if (spec.plot == "temperature") return gnuplot_parts::temperature_script(fig);
  const Layout layout = make_layout(fig, theory);
  const std::string base = "fig" + spec.name;
  std::vector<std::string> key;
  const std::string train = training_range(fig, layout, &key);

  std::string s = gnuplot_parts::script_intro(spec);
  if (layout.log_y)
    s += fmt::format(
        "# Test MSE is on a log axis: values below {:g} (exact zeros) are drawn at {:g}, and\n"
        "# non-finite values are not in the .dat (the curve breaks there).\n",
        kMseFloor, kMseFloor);
  else
    s += fmt::format(
        "# The {} is on a linear axis; non-finite values are not in the .dat (the curve breaks "
        "there).\n",
        metric_label(spec.metric));
  s += "set encoding utf8\n";
  // Enhanced text for the 10^{n} tic labels only; every user-written text is `noenhanced`, so an
  // '_' in "l_train" stays an underscore instead of a subscript.
  const gnuplot_style::Canvas canvas = gnuplot_style::canvas(800, 560);
  s += fmt::format("set title {} noenhanced {}\n", gnuplot_quote(gnuplot_parts::figure_title(spec)),
                   canvas.title_font());
  s += by_position(spec)
           ? "set xlabel 'position in the sequence (at the longest test length)' offset 0,0.3\n"
           : "set xlabel 'test length' offset 0,0.3\n";
  s += fmt::format("set xrange [1:{}]\n", layout.x_max);
  s += y_axis(spec, layout);
  s += gnuplot_style::axes();
  // Below the plot: whatever the curves do, the key never covers them.
  s += "set key outside below center horizontal Left reverse noenhanced samplen 2.5 spacing 1.1 "
       "width 2 height 0.6\n";
  s += "set style fill transparent solid 0.18 noborder\n";
  s += train;
  if (spec.metric == "excess_ce")  // a perfect model's excess; untagged: after training_range's
    s += "set arrow from graph 0, first 0 to graph 1, first 0 nohead back dashtype 3 "
         "linewidth 1.2 linecolor rgb '#404040'\n";
  if (!layout.any_point)
    s += "set label 1 'no data: no completed run' at graph 0.5, graph 0.5 center "
         "textcolor rgb '#808080'\n";
  const std::string plot = plot_command(fig, theory, layout, key);
  return s + gnuplot_style::png_then_svg(base, canvas, plot);
}

bool render_figure(const FigureSummary& fig, const fs::path& dir, const PlotOptions& opt,
                   const std::vector<TheoryCurve>& theory) {
  const std::string base = "fig" + spec_of(fig).name;
  write_file_atomic(dir / (base + ".dat"), figure_dat(fig, theory));
  write_file_atomic(dir / (base + ".gp"), figure_gnuplot_script(fig, theory));
  return run_gnuplot_script(dir, base, opt);
}

}  // namespace lenlab
