#pragma once
// The look every lenlab figure shares, written once: an L-shaped border with outward tics and a
// light grid behind the curves, and the two files each figure is drawn into, PNG then SVG (white
// background, the same size and font).
#include <fmt/format.h>

#include <string>

#include "plots/gnuplot.hpp"

namespace lenlab::gnuplot_style {

// `grid`: the tics the grid lines follow ("xtics ytics", or "ytics" for bars).
inline std::string axes(const std::string& grid = "xtics ytics") {
  return fmt::format(
      "set border 3 linewidth 1.0\nset tics nomirror out scale 0.6\nset grid {} back linetype 1 "
      "linecolor rgb '#d8d8d8' linewidth 0.8\n",
      grid);
}

inline std::string png_terminal(int width, int height, int font_size) {
  return fmt::format("set terminal pngcairo size {},{} enhanced font 'sans,{}'\n", width, height,
                     font_size);
}

inline std::string svg_terminal(int width, int height, int font_size) {
  return fmt::format("set terminal svg size {},{} enhanced font 'sans,{}' background rgb 'white'\n",
                     width, height, font_size);
}

// `plot` (its commands, ending in a newline) drawn into base.png, then replotted into base.svg.
inline std::string png_then_svg(const std::string& base, int width, int height, int font_size,
                                const std::string& plot) {
  return fmt::format("\n{}set output {}\n{}\n{}set output {}\nreplot\nset output\n",
                     png_terminal(width, height, font_size), gnuplot_quote(base + ".png"), plot,
                     svg_terminal(width, height, font_size), gnuplot_quote(base + ".svg"));
}

}  // namespace lenlab::gnuplot_style
