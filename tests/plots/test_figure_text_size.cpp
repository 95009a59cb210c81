// Report figures are read projected from the back of a room: every kind the report draws
// (curves, curves with a theory overlay, heatmaps, position curves, the misalignment scatter, the
// temperature curves, the per-layer panels, the method comparison) fills report.html's column on
// a 1280-px-wide screen, and all its text is at least 14 px there. Read from the .gp's terminals
// and fonts, and, where gnuplot is installed, from the font sizes of the SVG it draws.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "plots/gnuplot.hpp"
#include "plots/gnuplot_compare.hpp"
#include "plots/gnuplot_layers.hpp"
#include "report/report_html.hpp"
#include "tests/plots/figure_script_reading.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

constexpr double kLegiblePx = 14;  // the least text that reads when projected (issue 59)

// report.html's column on a 1280-px-wide screen: its body's max-width (in rem of 16 px), as the
// page lenlab writes sets it.
double page_column_px() {
  const std::string html = report_html("", test::fresh_dir("figure_text", "page"), "t");
  static const std::regex body(R"re(body \{[^}]*max-width: ([0-9.]+)rem)re");
  std::smatch m;
  REQUIRE(std::regex_search(html, m, body));
  const double px = std::stod(m[1].str()) * 16;
  REQUIRE(px < 1280);
  return px;
}

// gnuplot's pngcairo draws a font size of N as N·4/3 px (N points at 96 dpi) times its
// fontscale; svg as N px (an SVG's font-size is in px) times its fontscale.
double px_per_unit(const test::Terminal& t) {
  return (t.name == "pngcairo" ? 4.0 / 3.0 : 1.0) * t.fontscale;
}

// Both terminals of `script`: at least the column's width, and every font of the script (the
// terminal's and every `font ',N'`) at least kLegiblePx once the figure is shrunk to the column.
void check_legible(const std::string& what, const std::string& script) {
  CAPTURE(what);
  const double column = page_column_px();
  const std::vector<test::Terminal> terms = test::terminals(script);
  REQUIRE(terms.size() == 2);
  CHECK(terms[0].name == "pngcairo");
  CHECK(terms[1].name == "svg");
  std::vector<double> sizes = test::font_sizes(script);
  for (const test::Terminal& t : terms) {
    CAPTURE(t.name);
    CHECK(t.width >= column);  // fills the column
    const double shown = std::min<double>(t.width, column) / t.width;
    CHECK(t.font * px_per_unit(t) * shown >= kLegiblePx);
    for (const double size : sizes) {
      CAPTURE(size);
      CHECK(size * px_per_unit(t) * shown >= kLegiblePx);
    }
  }
  // The PNG and the SVG show text of one size.
  CHECK(terms[0].font * px_per_unit(terms[0]) ==
        doctest::Approx(terms[1].font * px_per_unit(terms[1])));
}

struct Figures {
  FigureSpec curves = test::figure_spec("length", "mse");
  FigureSpec heat = test::figure_spec("depth", "exact_match");
  FigureSpec position = test::figure_spec("position", "excess_ce");
  FigureSpec scatter = test::figure_spec("misalignment", "excess_ce");
  FigureSpec temperature = test::figure_spec("temperature", "exact_match");
  FigureSpec compare = test::figure_spec("length", "mse");
};

FigureSummary summary(const FigureSpec& spec, std::vector<FigureLine> lines) {
  FigureSummary f;
  f.spec = &spec;
  f.lines = std::move(lines);
  return f;
}

}  // namespace

TEST_CASE("figure text: every figure kind fills the page's column with text of 14 px or more") {
  Figures s;
  s.compare.baseline = "nope";
  const std::vector<int> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20};
  const std::vector<FigureLine> two = {test::figure_line("nope", x, 10),
                                       test::figure_line("rope", x, 10)};
  const TheoryCurve theory{"linear-attention theory", {1, 2, 3}, {0.1, 0.2, 0.3}};
  check_legible("curves", figure_gnuplot_script(summary(s.curves, two), {}));
  check_legible("curves with theory", figure_gnuplot_script(summary(s.curves, two), {theory}));
  check_legible("position", figure_gnuplot_script(summary(s.position, two), {}));
  check_legible("scatter", figure_gnuplot_script(summary(s.scatter, two), {}));
  check_legible("temperature", figure_gnuplot_script(summary(s.temperature, two), {}));
  for (const size_t n : {1, 2, 3, 4}) {
    std::vector<FigureLine> lines;
    for (size_t i = 0; i < n; ++i)
      lines.push_back(test::figure_line("pe" + std::to_string(i), {5, 6, 7, 8, 12, 16, 24, 32}, 8,
                                        {0, 0.25, 0.5, 0.75, 1}));
    check_legible("heatmap of " + std::to_string(n),
                  figure_gnuplot_script(summary(s.heat, lines), {}));
  }
  const FigureSummary layers = summary(s.curves, two);
  check_legible("layers", layer_figure_script(layers, LayerFigure::kStatistics));
  check_legible("distance", layer_figure_script(layers, LayerFigure::kDistance));
  const FigureSummary compared = summary(s.compare, two);
  check_legible("compare", compare_script({&compared}));
}

TEST_CASE("figure text: the SVG gnuplot draws has every font at 14 px or more in the column") {
  if (!gnuplot_available({})) {
    MESSAGE("gnuplot is not installed: skipping the drawn figures' font sizes");
    return;
  }
  Figures s;
  const std::vector<int> x = {5, 6, 7, 8, 9, 10, 11, 12, 16, 24, 32, 48};
  const double column = page_column_px();
  for (const FigureSpec* spec : {&s.curves, &s.heat}) {
    CAPTURE(spec->plot);
    const fs::path dir = test::fresh_dir("figure_text", "drawn-" + spec->plot);
    const std::vector<double> depths =
        spec->plot == "depth" ? std::vector<double>{0, 0.5, 1} : std::vector<double>{};
    REQUIRE(render_figure(summary(*spec, {test::figure_line("nope", x, 12, depths),
                                          test::figure_line("rope", x, 12, depths)}),
                          dir, {}));
    const std::string svg = test::read_text(dir / "figt.svg");
    static const std::regex width(R"re(<svg[^>]*\swidth="(\d+)")re");
    std::smatch m;
    REQUIRE(std::regex_search(svg, m, width));
    const double w = std::stod(m[1].str());
    CHECK(w >= column);
    static const std::regex font_size(R"re(font-size="([0-9.]+)")re");
    int fonts = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), font_size);
         it != std::sregex_iterator(); ++it, ++fonts)
      CHECK(std::stod((*it)[1].str()) * std::min(w, column) / w >= kLegiblePx);
    CHECK(fonts > 5);
  }
}

}  // namespace lenlab
