// plot "misalignment": every run's metric far past training against its long-short misalignment
// at l_train, a colour per line, with the correlations in the title (paper 000's Table 1 as a
// figure). The .dat holds one block per line; the .gp draws them as points.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "results/figure_metric.hpp"

namespace lenlab::gnuplot_parts {

namespace {

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#bcbd22", "#17becf"};
constexpr int kPointTypes[] = {7, 5, 9, 11, 13, 15};

std::string coefficient(double r) {
  return std::isfinite(r) ? fmt::format("{:.2f}", r) : "undefined";
}

// A log axis for the MSE, as the length plots have (plots/gnuplot.cpp), and for any values
// spanning more than two decades; never with a value <= 0, which a log axis cannot show.
bool log_axis(const std::vector<double>& v, bool mse) {
  if (v.empty()) return false;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *lo > 0 && (mse || *hi / *lo > 100);
}

}  // namespace

std::string scatter_dat(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const MisalignmentScatter& sc = fig.scatter;
  std::string out =
      fmt::format("# lenlab figure {}: {}\n", comment_text(spec.name), comment_text(spec.title));
  out += fmt::format(
      "# One block per line (gnuplot `index`, in the order of the key), one row per run:\n"
      "# misalignment at l_train, {} at length {}, {} at the run's l_train, seed.\n",
      metric_label(spec.metric), sc.at_length, metric_label(spec.metric));
  for (size_t i = 0; i < fig.lines.size(); ++i) {
    out += fmt::format("# block {}: {}\n", i, comment_text(line_title(spec, fig.lines[i])));
    bool any = false;
    for (const MisalignmentPoint& p : sc.points)
      if (p.line == i) {
        out += fmt::format("{:.9g} {:.9g} {:.9g} {}\n", p.misalignment, p.far, p.at_train,
                           p.run->spec.seed);
        any = true;
      }
    if (!any) out += "nan nan nan 0\n";  // keeps the block numbering; gnuplot skips NaN
    out += "\n\n";
  }
  return out;
}

std::string scatter_script(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const MisalignmentScatter& sc = fig.scatter;
  const std::string base = "fig" + spec.name;
  std::vector<double> xs, ys;
  for (const MisalignmentPoint& p : sc.points) {
    xs.push_back(p.misalignment);
    ys.push_back(p.far);
  }
  std::string s = script_intro(spec);
  s += "set encoding utf8\n";
  const gnuplot_style::Canvas canvas = gnuplot_style::canvas(800, 640);
  s += fmt::format("set title {} noenhanced {} offset 0,2.4\n", gnuplot_quote(figure_title(spec)),
                   canvas.title_font());
  // The coefficients on two lines of their own between the title and the points, placed from
  // the plot's top in lines of text so that they clear both at every font size.
  s += "set tmargin 6\n";
  s += "set rmargin 6\n";  // room for the last x tic's label (e.g. 4.5×10^-5)
  s += fmt::format(
      "set label 2 {} at graph 0.5, graph 1 offset 0,2.3 center front noenhanced\n"
      "set label 3 {} at graph 0.5, graph 1 offset 0,1.1 center front noenhanced\n",
      gnuplot_quote(fmt::format("misalignment: Pearson r = {}, Spearman ρ = {} over {} runs",
                                coefficient(sc.pearson_misalignment),
                                coefficient(sc.spearman_misalignment), sc.points.size())),
      gnuplot_quote(fmt::format("the metric at l_train instead: r = {}, ρ = {}",
                                coefficient(sc.pearson_train), coefficient(sc.spearman_train))));
  s += "set xlabel 'long-short misalignment at l_train' noenhanced offset 0,0.3\n";
  s += fmt::format(
      "set ylabel {} noenhanced\n",
      gnuplot_quote(fmt::format("{} at length {}", metric_label(spec.metric), sc.at_length)));
  if (log_axis(xs, false)) s += "set logscale x\n" + gnuplot_style::log_tic_format("x", false);
  if (log_axis(ys, spec.metric == "mse"))
    s += "set logscale y\n" + gnuplot_style::log_tic_format("y", false);
  s += gnuplot_style::axes();
  s += "set key outside below center horizontal Left reverse noenhanced samplen 1.5 spacing 1.1\n";
  if (sc.points.empty())
    s += "set label 1 'no data: no completed run with a misalignment' at graph 0.5, graph 0.5 "
         "center textcolor rgb '#808080'\n";
  std::string plot = "plot ";
  for (size_t i = 0; i < fig.lines.size(); ++i) {
    // A line whose runs all sit under an earlier line (a shared run) has no point: no key entry.
    const bool drawn = std::any_of(sc.points.begin(), sc.points.end(),
                                   [i](const MisalignmentPoint& p) { return p.line == i; });
    plot += fmt::format(
        "{}{} index {} using 1:2 with points pointtype {} pointsize 1.1 linecolor rgb '{}' {}",
        i ? ", \\\n     " : "", gnuplot_quote(dat_name(spec)), i,
        kPointTypes[i / std::size(kColours) % std::size(kPointTypes)],
        kColours[i % std::size(kColours)],
        drawn ? "title " + gnuplot_quote(line_title(spec, fig.lines[i])) : "notitle");
  }
  if (sc.points.empty()) plot = "plot NaN notitle";
  return s + gnuplot_style::png_then_svg(base, canvas, plot + "\n");
}

}  // namespace lenlab::gnuplot_parts
