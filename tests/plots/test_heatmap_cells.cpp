// The passkey heatmap's geometry, read back from the .dat and .gp lenlab writes: a column per
// tested length and a row per depth, all of one width, each centred on its tic, neighbours
// meeting half-way; the dashed training line exactly where its label says; tic labels thinned
// when they would not fit, never the two beside the training line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "plots/gnuplot.hpp"
#include "tests/plots/figure_script_reading.hpp"

namespace lenlab {

namespace {

using test::HeatCell;
using test::Tic;

// The labelled tics by label, and every tic's position in order.
std::map<std::string, double> labelled(const std::vector<Tic>& tics) {
  std::map<std::string, double> out;
  for (const Tic& t : tics)
    if (!t.label.empty()) out[t.label] = t.at;
  return out;
}

std::string label_of(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Every cell centred on its length's and depth's tic, one width and height throughout, and
// neighbouring columns (rows) meeting half-way between their tics.
void check_cells(const std::vector<HeatCell>& cells, const std::vector<Tic>& xtics,
                 const std::vector<Tic>& ytics, const std::vector<int>& lengths,
                 const std::vector<double>& depths) {
  REQUIRE(xtics.size() == lengths.size());  // a tic per tested length
  REQUIRE(ytics.size() == depths.size());
  REQUIRE(cells.size() == lengths.size() * depths.size());
  const std::map<std::string, double> xl = labelled(xtics), yl = labelled(ytics);
  const double width = cells.front().column_to - cells.front().column_from;
  const double height = cells.front().row_to - cells.front().row_from;
  CHECK(width > 0);
  CHECK(height > 0);
  for (const HeatCell& c : cells) {
    const size_t i =
        std::find(lengths.begin(), lengths.end(), static_cast<int>(c.length)) - lengths.begin();
    const size_t j = std::find(depths.begin(), depths.end(), c.depth) - depths.begin();
    REQUIRE(i < lengths.size());
    REQUIRE(j < depths.size());
    CAPTURE(c.length);
    CAPTURE(c.depth);
    // Centred on its tic (the i-th, labelled with its length where labelled).
    CHECK((c.column_from + c.column_to) / 2 == doctest::Approx(xtics[i].at));
    CHECK((c.row_from + c.row_to) / 2 == doctest::Approx(ytics[j].at));
    CHECK(c.column == doctest::Approx(xtics[i].at));
    if (xl.count(label_of(c.length))) CHECK(xl.at(label_of(c.length)) == c.column);
    if (yl.count(label_of(c.depth))) CHECK(yl.at(label_of(c.depth)) == c.row);
    // One width, one height.
    CHECK(c.column_to - c.column_from == doctest::Approx(width));
    CHECK(c.row_to - c.row_from == doctest::Approx(height));
    // Half-way to the neighbouring tics.
    if (i > 0) CHECK(c.column_from == doctest::Approx((xtics[i - 1].at + xtics[i].at) / 2));
    if (i + 1 < lengths.size())
      CHECK(c.column_to == doctest::Approx((xtics[i].at + xtics[i + 1].at) / 2));
    if (j > 0) CHECK(c.row_from == doctest::Approx((ytics[j - 1].at + ytics[j].at) / 2));
  }
}

// The number N of the panel's x label "… after l_train = N", the `occurrence`-th panel's.
int labelled_l_train(const std::string& script, int occurrence = 0) {
  static const std::regex label(R"re(set xlabel [^\n]*after l_train = (\d+))re");
  auto it = std::sregex_iterator(script.begin(), script.end(), label);
  for (int k = 0; k < occurrence && it != std::sregex_iterator(); ++k) ++it;
  REQUIRE(it != std::sregex_iterator());
  return std::stoi((*it)[1].str());
}

// The training line sits where its label says: after the column of the last length <= l_train
// (its right edge), before the next (its left edge).
void check_training_line(const std::vector<HeatCell>& cells, double line_x, int l_train) {
  double last_trained_edge = -1e9, first_untrained_edge = 1e9;
  for (const HeatCell& c : cells) {
    if (c.length <= l_train)
      last_trained_edge = std::max(last_trained_edge, c.column_to);
    else
      first_untrained_edge = std::min(first_untrained_edge, c.column_from);
  }
  if (last_trained_edge > -1e9) CHECK(line_x == doctest::Approx(last_trained_edge));
  if (first_untrained_edge < 1e9) CHECK(line_x == doctest::Approx(first_untrained_edge));
  for (const HeatCell& c : cells)  // never through a cell
    CHECK_FALSE((c.column_from < line_x - 1e-9 && line_x + 1e-9 < c.column_to));
}

}  // namespace

TEST_CASE(
    "heatmap: irregular lengths get equal columns centred on their tics, l_train's line "
    "between 12 and 16") {
  const FigureSpec spec = test::figure_spec("depth", "exact_match");
  const std::vector<int> lengths = {5, 6, 7, 8, 9, 10, 11, 12, 16, 24, 32, 48};
  const std::vector<double> depths = {0, 0.25, 0.5, 0.75, 1};
  FigureSummary fig;
  fig.spec = &spec;
  fig.lines = {test::figure_line("nope", lengths, 12, depths),
               test::figure_line("rope", lengths, 12, depths)};
  const std::string gp = figure_gnuplot_script(fig, {});
  const std::string dat = figure_dat(fig, {});
  for (int panel = 0; panel < 2; ++panel) {
    CAPTURE(panel);
    const std::vector<HeatCell> cells = test::heat_cells(dat, panel);
    const std::vector<Tic> xtics = test::tic_list(gp, "xtics", panel);
    check_cells(cells, xtics, test::tic_list(gp, "ytics", panel), lengths, depths);
    CHECK(labelled_l_train(gp, panel) == 12);
    check_training_line(cells, test::arrow_x(gp, panel), 12);
    // The columns either side of the line keep their labels, and the line is half-way between.
    const std::map<std::string, double> xl = labelled(xtics);
    REQUIRE(xl.count("12"));
    REQUIRE(xl.count("16"));
    CHECK(test::arrow_x(gp, panel) == doctest::Approx((xl.at("12") + xl.at("16")) / 2));
  }
}

TEST_CASE("heatmap: a regular grid labels every length, each cell on its tic") {
  const FigureSpec spec = test::figure_spec("depth", "token_accuracy");
  std::vector<int> lengths;
  for (int l = 5; l <= 24; ++l) lengths.push_back(l);
  const std::vector<double> depths = {0, 0.5, 1};
  FigureSummary fig;
  fig.spec = &spec;
  fig.lines = {test::figure_line("rope", lengths, 10, depths)};
  const std::string gp = figure_gnuplot_script(fig, {});
  const std::vector<HeatCell> cells = test::heat_cells(figure_dat(fig, {}), 0);
  const std::vector<Tic> xtics = test::tic_list(gp, "xtics");
  check_cells(cells, xtics, test::tic_list(gp, "ytics"), lengths, depths);
  CHECK(labelled(xtics).size() == lengths.size());  // one panel across the page: room for all
  CHECK(labelled_l_train(gp) == 10);
  check_training_line(cells, test::arrow_x(gp), 10);
}

TEST_CASE(
    "heatmap: too many lengths for their labels: every k-th labelled, both sides of "
    "the training line kept") {
  const FigureSpec spec = test::figure_spec("depth", "exact_match");
  std::vector<int> lengths;
  for (int l = 5; l <= 100; ++l) lengths.push_back(l);
  FigureSummary fig;
  fig.spec = &spec;
  fig.lines = {test::figure_line("nope", lengths, 20, {0, 1}),
               test::figure_line("rope", lengths, 20, {0, 1})};
  const std::string gp = figure_gnuplot_script(fig, {});
  const std::vector<Tic> xtics = test::tic_list(gp, "xtics");
  const std::map<std::string, double> xl = labelled(xtics);
  CHECK(xtics.size() == lengths.size());  // a tic per column still
  CHECK(xl.size() < lengths.size() / 2);
  CHECK(xl.size() >= 4);
  CHECK(xl.count("20"));
  CHECK(xl.count("21"));
  for (const Tic& t : xtics) CHECK((t.label.empty() ? t.level == 1 : t.level == 0));
  check_cells(test::heat_cells(figure_dat(fig, {}), 0), xtics, test::tic_list(gp, "ytics"), lengths,
              {0, 1});
  check_training_line(test::heat_cells(figure_dat(fig, {}), 0), test::arrow_x(gp), 20);
}

TEST_CASE("heatmap: no length trained on, or all: the line at the first or last edge") {
  const FigureSpec spec = test::figure_spec("depth", "exact_match");
  FigureSummary fig;
  fig.spec = &spec;
  fig.lines = {test::figure_line("none", {16, 24, 32}, 12, {0, 1}),
               test::figure_line("all", {5, 6, 8}, 12, {0, 1})};
  const std::string gp = figure_gnuplot_script(fig, {});
  const std::string dat = figure_dat(fig, {});
  const std::vector<HeatCell> none = test::heat_cells(dat, 0), all = test::heat_cells(dat, 1);
  CHECK(test::arrow_x(gp, 0) == doctest::Approx(none.front().column_from));
  CHECK(test::arrow_x(gp, 1) == doctest::Approx(all.back().column_to));
  check_training_line(none, test::arrow_x(gp, 0), 12);
  check_training_line(all, test::arrow_x(gp, 1), 12);
}

}  // namespace lenlab
