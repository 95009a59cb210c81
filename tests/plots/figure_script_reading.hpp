#pragma once
// Reading back what lenlab writes for gnuplot (tests/plots/test_heatmap_cells.cpp,
// test_figure_text_size.cpp): a heatmap's cells from its .dat, an axis' tics and the training
// line from its .gp, the terminals' sizes and fonts, and hand-made figures of each plot kind.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "results/figure_setup.hpp"

namespace lenlab::test {

// A line of a heatmap's .dat: the cell's length, depth and value, its place (column, row) and
// extent (column from, to, row from, to).
struct HeatCell {
  double length = 0, depth = 0, value = 0, column = 0, row = 0;
  double column_from = 0, column_to = 0, row_from = 0, row_to = 0;
};

// The cells of the .dat's block `block` (blocks are separated by two blank lines).
inline std::vector<HeatCell> heat_cells(const std::string& dat, int block) {
  std::vector<HeatCell> cells;
  std::istringstream in(dat);
  std::string line;
  int at = -1, blanks = 0;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      ++blanks;
      continue;
    }
    if (line[0] == '#') continue;
    if (!in_block || blanks >= 2) ++at;
    in_block = true;
    blanks = 0;
    if (at != block) continue;
    std::istringstream row(line);
    HeatCell c;
    row >> c.length >> c.depth >> c.value >> c.column >> c.row >> c.column_from >> c.column_to >>
        c.row_from >> c.row_to;
    REQUIRE_MESSAGE(!row.fail(), "a .dat row of 9 numbers: ", line);
    cells.push_back(c);
  }
  return cells;
}

// One tic of `set xtics (...)`: its label ('' for a minor tic), position and level (1: minor).
struct Tic {
  std::string label;
  double at = 0;
  int level = 0;
};

// The tics of the `occurrence`-th `set <axis> (...)` in `script` (a panel per occurrence).
inline std::vector<Tic> tic_list(const std::string& script, const std::string& axis,
                                 int occurrence = 0) {
  const std::string head = "set " + axis + " (";
  size_t at = 0;
  for (int k = 0; k <= occurrence; ++k) {
    at = script.find(head, k == 0 ? 0 : at + 1);
    REQUIRE_MESSAGE(at != std::string::npos, "no ", head, " number ", occurrence);
  }
  const size_t end = script.find(")\n", at);
  const std::string list = script.substr(at + head.size(), end - at - head.size());
  static const std::regex tic(R"re('((?:[^']|'')*)' ([-0-9.e]+)( 1)?)re");
  std::vector<Tic> tics;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), tic); it != std::sregex_iterator();
       ++it)
    tics.push_back({(*it)[1].str(), std::stod((*it)[2].str()), (*it)[3].matched ? 1 : 0});
  return tics;
}

// The x of the `occurrence`-th `set arrow 1 from first X, graph 0 …` (the training line).
inline double arrow_x(const std::string& script, int occurrence = 0) {
  static const std::regex arrow(R"re(set arrow 1 from first ([-0-9.e]+), graph 0)re");
  auto it = std::sregex_iterator(script.begin(), script.end(), arrow);
  for (int k = 0; k < occurrence && it != std::sregex_iterator(); ++k) ++it;
  REQUIRE(it != std::sregex_iterator());
  return std::stod((*it)[1].str());
}

// A terminal line of a .gp: `set terminal pngcairo|svg size W,H … font 'sans,N' [fontscale F]`.
struct Terminal {
  std::string name;
  int width = 0, height = 0;
  double font = 0, fontscale = 1;
};

inline std::vector<Terminal> terminals(const std::string& script) {
  static const std::regex term(
      R"re(set terminal (\w+) size (\d+),(\d+)[^\n]* font 'sans,([0-9.]+)'( fontscale ([0-9.]+))?)re");
  std::vector<Terminal> out;
  for (auto it = std::sregex_iterator(script.begin(), script.end(), term);
       it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1].str(), std::stoi((*it)[2].str()), std::stoi((*it)[3].str()),
                   std::stod((*it)[4].str()), (*it)[5].matched ? std::stod((*it)[6].str()) : 1});
  return out;
}

// Every `font ',N'` of a script (titles, labels, keys): N in the terminal's units.
inline std::vector<double> font_sizes(const std::string& script) {
  static const std::regex font(R"re(font ',([0-9.]+)')re");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(script.begin(), script.end(), font);
       it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1].str()));
  return out;
}

// A figure made by hand: `plot` and `metric`, one line per label, each with the lengths `x`,
// l_train and, for plot "depth", the depths and a grid of values.
inline FigureSpec figure_spec(const std::string& plot, const std::string& metric) {
  FigureSpec spec;
  spec.name = "t";
  spec.title = "A figure";
  spec.vary = "pe";
  spec.plot = plot;
  spec.metric = metric;
  spec.at_length = plot == "misalignment" ? 32 : 0;
  return spec;
}

inline FigureLine figure_line(const std::string& label, std::vector<int> x, int l_train,
                              std::vector<double> depths = {}) {
  FigureLine line;
  line.label = label;
  line.spec.task = depths.empty() ? "length" : "passkey";
  line.spec.l_train = l_train;
  line.spec.l_test = x.empty() ? l_train : x.back();
  line.x = std::move(x);
  line.depths = std::move(depths);
  for (size_t i = 0; i < line.x.size(); ++i) {
    const double v = 1.0 / (1.0 + static_cast<double>(i));
    line.value_mean.push_back(v);
    line.value_min.push_back(v / 2);
    line.value_max.push_back(v * 2);
    for (size_t j = 0; j < line.depths.size(); ++j)
      line.grid.push_back(v * (1.0 - 0.1 * static_cast<double>(j)));
  }
  return line;
}

}  // namespace lenlab::test
