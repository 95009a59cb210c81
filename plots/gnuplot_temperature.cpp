// plot "temperature": the figure's metric against the attention temperature τ of the search's grid,
// one curve per (line, test length past l_train), and on each curve the τ every criterion chose
// (Algorithm 1 by each statistic, Propositions 1 and 2, the log rule) as a point. The .dat holds
// one block per curve, then one block per criterion; the .gp draws them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "results/figure_metric.hpp"

namespace lenlab::gnuplot_parts {

namespace {

// One point type per criterion, in temperature_criteria()'s order: filled circle, square,
// triangle up, triangle down, diamond.
constexpr int kCriterionPoints[] = {7, 5, 9, 11, 13};

struct CurveRef {
  const FigureLine* line;
  const TemperatureCurve* curve;
};

std::vector<CurveRef> curves_of(const FigureSummary& fig) {
  std::vector<CurveRef> out;
  for (const FigureLine& line : fig.lines)
    for (const TemperatureCurve& c : line.temperature) out.push_back({&line, &c});
  return out;
}

std::string curve_title(const FigureSummary& fig, const CurveRef& c) {
  const std::string length = fmt::format("length {}", c.curve->length);
  return fig.lines.size() > 1 ? line_title(*fig.spec, *c.line) + ", " + length : length;
}

}  // namespace

std::string temperature_dat(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const std::vector<CurveRef> curves = curves_of(fig);
  std::string out =
      fmt::format("# lenlab figure {}: {}\n", comment_text(spec.name), comment_text(spec.title));
  out += fmt::format(
      "# First one block per curve (gnuplot `index`): tau, mean {} over seeds, min, max; then one\n"
      "# block per criterion: tau it chose (mean over seeds), the curve's mean there, length.\n"
      "# A criterion's tau outside the grid has no point (the report lists it).\n",
      metric_label(spec.metric));
  for (size_t k = 0; k < curves.size(); ++k) {
    out += fmt::format("# block {}: {}\n", k, comment_text(curve_title(fig, curves[k])));
    const TemperatureCurve& c = *curves[k].curve;
    for (size_t i = 0; i < c.tau.size(); ++i)
      out += fmt::format("{:.9g} {:.9g} {:.9g} {:.9g}\n", c.tau[i], c.value_mean[i], c.value_min[i],
                         c.value_max[i]);
    out += "\n\n";
  }
  for (size_t j = 0; j < temperature_criteria().size(); ++j) {
    const std::string& criterion = temperature_criteria()[j];
    out +=
        fmt::format("# block {}: {}\n", curves.size() + j, temperature_criterion_label(criterion));
    bool any = false;
    for (const CurveRef& c : curves) {
      const double tau = c.curve->chosen.at(criterion);
      const double y = temperature_curve_at(*c.curve, tau);
      if (!std::isfinite(y)) continue;
      out += fmt::format("{:.9g} {:.9g} {}\n", tau, y, c.curve->length);
      any = true;
    }
    if (!any) out += "nan nan 0\n";  // keeps the block numbering; gnuplot skips NaN
    out += "\n\n";
  }
  return out;
}

std::string temperature_script(const FigureSummary& fig) {
  const FigureSpec& spec = spec_of(fig);
  const std::vector<CurveRef> curves = curves_of(fig);
  const std::string base = "fig" + spec.name;
  std::string s = script_intro(spec);
  s += "set encoding utf8\n";
  const gnuplot_style::Canvas canvas = gnuplot_style::canvas(960, 600);
  s += fmt::format("set title {} noenhanced {}\n", gnuplot_quote(figure_title(spec)),
                   canvas.title_font());
  s += "set xlabel 'attention temperature τ (search grid)' noenhanced\n";
  s += fmt::format("set ylabel {} noenhanced\n", gnuplot_quote(metric_label(spec.metric)));
  if (metric_is_fraction(spec.metric)) s += "set yrange [0:1]\n";
  bool positive = !curves.empty();
  for (const CurveRef& c : curves)
    for (double v : c.curve->value_mean) positive = positive && v > 0;
  if (spec.metric == "mse" && positive)
    s += "set logscale y\n" + gnuplot_style::log_tic_format("y", false);
  s += gnuplot_style::axes();
  s += "set key outside right top vertical Left reverse noenhanced samplen 1.5 spacing 1.1\n";
  std::string plot = "plot ";
  for (size_t k = 0; k < curves.size(); ++k)
    plot += fmt::format(
        "{}{} index {} using 1:2 with linespoints pointtype 7 pointsize 0.4 linewidth 1.6 "
        "linecolor rgb '{}' title {}",
        k ? ", \\\n     " : "", gnuplot_quote(dat_name(spec)), k, line_colour(k),
        gnuplot_quote(curve_title(fig, curves[k])));
  for (size_t j = 0; j < temperature_criteria().size() && !curves.empty(); ++j)
    plot += fmt::format(
        ", \\\n     {} index {} using 1:2 with points pointtype {} pointsize 1.5 linecolor rgb "
        "'#303030' title {}",
        gnuplot_quote(dat_name(spec)), curves.size() + j, kCriterionPoints[j],
        gnuplot_quote(temperature_criterion_label(temperature_criteria()[j])));
  if (curves.empty()) {
    s += "set label 1 'no data: no completed run with a temperature search' at graph 0.5, graph "
         "0.5 center textcolor rgb '#808080'\n";
    plot = "plot NaN notitle";
  }
  return s + gnuplot_style::png_then_svg(base, canvas, plot + "\n");
}

}  // namespace lenlab::gnuplot_parts
