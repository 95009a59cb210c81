#include "plots/gnuplot_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "plots/method_comparison.hpp"
#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

// Every compared line but the baselines, in order of first appearance: the bar groups.
std::vector<std::string> methods_of(const std::vector<const FigureSummary*>& compared) {
  std::vector<std::string> out;
  for (const FigureSummary* f : compared)
    for (const FigureLine& l : f->lines)
      if (l.label != f->spec->baseline && std::find(out.begin(), out.end(), l.label) == out.end())
        out.push_back(l.label);
  return out;
}

// A bar: the improvement factor and its range over seeds; nullopt-like (ratio 0) when it has no
// run or the baseline has none.
struct Bar {
  double ratio = 0, lo = 0, hi = 0;
};

Bar bar_of(const FigureSummary& f, const std::vector<ComparedLine>& lines,
           const std::string& method) {
  const auto find = [&](const std::string& label) {
    return std::find_if(lines.begin(), lines.end(),
                        [&](const ComparedLine& c) { return c.label == label; });
  };
  const auto base = find(f.spec->baseline), line = find(method);
  if (base == lines.end() || line == lines.end() || base->n_seeds == 0 || line->n_seeds == 0)
    return {};
  const bool higher_better = metric_is_fraction(f.spec->metric);
  const double b = base->mean;
  Bar out = higher_better ? Bar{line->mean / b, line->min / b, line->max / b}
                          : Bar{b / line->mean, b / line->max, b / line->min};
  if (!(std::isfinite(out.ratio) && out.ratio > 0 && out.lo > 0 && std::isfinite(out.hi)))
    return {};
  return out;
}

}  // namespace

std::vector<const FigureSummary*> compared_figures(const std::vector<FigureSummary>& figures) {
  std::vector<const FigureSummary*> out;
  for (const FigureSummary& f : figures)
    if (!f.spec->baseline.empty()) out.push_back(&f);
  return out;
}

bool has_compare_bars(const std::vector<const FigureSummary*>& compared) {
  const std::vector<std::string> methods = methods_of(compared);
  for (const FigureSummary* f : compared) {
    const std::vector<ComparedLine> lines = compare_lines(*f);
    for (const std::string& m : methods)
      if (bar_of(*f, lines, m).ratio > 0) return true;
  }
  return false;
}

std::string compare_dat(const std::vector<const FigureSummary*>& compared) {
  const std::vector<std::string> methods = methods_of(compared);
  const double width = 0.8 / static_cast<double>(std::max<size_t>(1, compared.size()));
  std::string out =
      "# lenlab: improvement over each figure's baseline beyond l_train (factor, > 1 better)\n"
      "# one block per figure: x, factor, seeds' low, high, bar left, bar right, method\n";
  for (size_t t = 0; t < compared.size(); ++t) {
    out += fmt::format("# figure {}\n", compared[t]->spec->name);
    const std::vector<ComparedLine> lines = compare_lines(*compared[t]);
    bool any = false;
    for (size_t g = 0; g < methods.size(); ++g) {
      const Bar bar = bar_of(*compared[t], lines, methods[g]);
      if (bar.ratio <= 0) continue;
      const double x =
          static_cast<double>(g) + (static_cast<double>(t) - (compared.size() - 1) / 2.0) * width;
      out += fmt::format("{:.6g} {:.9g} {:.9g} {:.9g} {:.6g} {:.6g} \"{}\"\n", x, bar.ratio, bar.lo,
                         bar.hi, x - width / 2, x + width / 2, methods[g]);
      any = true;
    }
    if (!any) out += "NaN NaN NaN NaN NaN NaN \"\"\n";  // an empty block keeps the numbering
    out += "\n\n";
  }
  return out;
}

std::string compare_script(const std::vector<const FigureSummary*>& compared) {
  const std::vector<std::string> methods = methods_of(compared);
  std::string s =
      "# lenlab figure compare: each method's improvement over its task's baseline\n"
      "# Redraw from this folder with `gnuplot compare.gp`: reads compare.dat, writes "
      "compare.png and compare.svg.\n";
  const gnuplot_style::Canvas canvas =
      gnuplot_style::canvas(std::max(800, 70 * static_cast<int>(methods.size()) + 200), 620);
  s += "set encoding utf8\n";
  s += "set title 'Methods compared: improvement over the baseline beyond l_train (seed range "
       "whiskered)' noenhanced " +
       canvas.title_font() + "\n";
  s += "set ylabel 'factor better than the baseline (log; < 1: worse)'\n";
  s += "set logscale y 10\n";
  s += gnuplot_style::axes("ytics");
  s += "set key outside below center horizontal Left reverse noenhanced samplen 1.5\n";
  s += "set style fill solid 0.75 noborder\n";
  s += fmt::format("set xrange [-0.6:{}]\n", static_cast<double>(methods.size()) - 0.4);
  std::string tics;
  for (size_t g = 0; g < methods.size(); ++g)
    tics += fmt::format("{}{} {}", g ? ", " : "", gnuplot_quote(methods[g]), g);
  s += "set xtics (" + tics + ") rotate by -35 left noenhanced\n";
  s += "set arrow from graph 0, first 1 to graph 1, first 1 nohead front dashtype 2 linewidth "
       "1.2 linecolor rgb '#404040'\n";
  std::string plot = "plot ";
  for (size_t t = 0; t < compared.size(); ++t) {
    const FigureSummary& f = *compared[t];
    const TrainSpec& spec = f.lines.empty() ? f.spec->base : f.lines.front().spec;
    plot += fmt::format(
        "'compare.dat' index {0} using 1:(1):5:6:(($2 < 1) ? $2 : 1):(($2 < 1) ? 1 : $2) with "
        "boxxyerror linecolor rgb '{1}' title {2}, "
        "'compare.dat' index {0} using 1:2:3:4 with yerrorbars pointtype 7 pointsize 0.3 "
        "linecolor rgb '#303030' notitle, ",
        t, gnuplot_parts::line_colour(t),
        gnuplot_quote(
            fmt::format("{} ({}, {})", spec.task, spec.pe, metric_label(f.spec->metric))));
  }
  plot.resize(plot.size() - 2);
  plot += "\n";
  return s + gnuplot_style::png_then_svg("compare", canvas, plot);
}

bool render_compare_figure(const std::vector<const FigureSummary*>& compared,
                           const std::filesystem::path& dir, const PlotOptions& opt) {
  write_file_atomic(dir / "compare.dat", compare_dat(compared));
  if (!has_compare_bars(compared)) {
    // Nothing to draw (gnuplot would stop at "all points y value undefined"): no script, and no
    // figure left over from an earlier drawing of other runs.
    for (const char* stale : {"compare.gp", "compare.png", "compare.svg"})
      std::filesystem::remove(dir / stale);
    return true;
  }
  write_file_atomic(dir / "compare.gp", compare_script(compared));
  return run_gnuplot_script(dir, "compare", opt);
}

}  // namespace lenlab
