#pragma once
// The look every lenlab figure shares, written once: an L-shaped border with outward tics and a
// light grid behind the curves, the canvas a figure is drawn on (as wide as the report page, its
// text legible when the page is projected), and the two files each figure is drawn into, PNG then
// SVG (white background, the same size and font).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "plots/gnuplot.hpp"

namespace lenlab::gnuplot_style {

// A class reads the report's figures projected from the back of a room. report.html shows a figure
// at the width of its column, at most its own width (report/report_html.cpp); a markdown viewer's
// column is about as wide. This is that column on a 1280-px-wide screen: the body's max-width,
// 62rem of 16 px.
inline constexpr int kPageWidthPx = 992;
// The smallest text of a figure (tic labels, axis labels, key) as shown in that column, in px of
// the font's size: 14 px is the least that reads when projected; one more to spare.
inline constexpr int kPageTextPx = 15;

// What a figure is drawn on: its size in px (the PNG's pixels, the SVG's user units) and the sizes
// of its text in the same px.
struct Canvas {
  int width = kPageWidthPx, height = 600;
  int text_px = kPageTextPx;   // tic labels, axis labels, key: the terminal's font
  int title_px = kPageTextPx;  // the figure's title

  // The title's font, for `set title … {}` or a multiplot's title.
  std::string title_font() const { return fmt::format("font ',{}'", title_px); }
};

// A canvas at least as wide as the page: one `width` × `height` px at its design is widened to the
// page, its height in proportion, so that it fills the report's column; its text is kPageTextPx
// when shown there (a wider figure is shrunk to the column, its text drawn larger to match).
inline Canvas canvas(int width, int height) {
  Canvas c;
  c.width = std::max(width, kPageWidthPx);
  c.height = static_cast<int>(std::lround(static_cast<double>(height) * c.width / width));
  const double shrink = static_cast<double>(c.width) / kPageWidthPx;  // >= 1
  c.text_px = static_cast<int>(std::ceil(kPageTextPx * shrink));
  c.title_px = static_cast<int>(std::ceil(kPageTextPx * 1.2 * shrink));
  return c;
}

// `grid`: the tics the grid lines follow ("xtics ytics", or "ytics" for bars).
inline std::string axes(const std::string& grid = "xtics ytics") {
  return fmt::format(
      "set border 3 linewidth 1.0\nset tics nomirror out scale 0.6\nset grid {} back linetype 1 "
      "linecolor rgb '#d8d8d8' linewidth 0.8\n",
      grid);
}

// A log axis' tic labels, "10^-3" (`decades`: its tics are whole decades) or "4.5×10^-5": the
// exponent as large as the rest of the text (gnuplot draws a superscript at 0.8 of it, which would
// bring kPageTextPx under 14 px). Enhanced text: the terminals' default.
inline std::string log_tic_format(const std::string& axis, bool decades) {
  return fmt::format("set format {} '{}10^{{/*1.25 %T}}'\n", axis, decades ? "" : "%.1t×");
}

// pngcairo draws a font of N points N·4/3 px tall (96 dpi; measured: an 'H' of 'sans,100' is 98
// px, DejaVu Sans' cap height being 0.73 of its size); fontscale 0.75 makes its sizes px, as the
// svg terminal's are, so that a script's `font ',N'` is N px in both files.
inline std::string png_terminal(const Canvas& c) {
  return fmt::format("set terminal pngcairo size {},{} enhanced font 'sans,{}' fontscale 0.75\n",
                     c.width, c.height, c.text_px);
}

inline std::string svg_terminal(const Canvas& c) {
  return fmt::format("set terminal svg size {},{} enhanced font 'sans,{}' background rgb 'white'\n",
                     c.width, c.height, c.text_px);
}

// `plot` (its commands, ending in a newline) drawn into base.png, then replotted into base.svg.
inline std::string png_then_svg(const std::string& base, const Canvas& c, const std::string& plot) {
  return fmt::format("\n{}set output {}\n{}\n{}set output {}\nreplot\nset output\n",
                     png_terminal(c), gnuplot_quote(base + ".png"), plot, svg_terminal(c),
                     gnuplot_quote(base + ".svg"));
}

}  // namespace lenlab::gnuplot_style
