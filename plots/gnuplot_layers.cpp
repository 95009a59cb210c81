#include "plots/gnuplot_layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include "core/atomic_file.hpp"
#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

namespace {

using gnuplot_parts::line_colour;
using gnuplot_parts::spec_of;

// One run's curve for one layer: x → the mean over heads (and depth cells) of a quantity.
using LayerCurve = std::map<int, double>;

// What a row of panels draws.
struct Quantity {
  std::string ylabel;
  std::function<LayerCurve(const RunRecord&, int layer)> curve;
};

// Adds `v` at x into sums / counts (NaN skipped).
void add_point(std::map<int, std::pair<double, int>>& acc, int x, double v) {
  if (std::isnan(v)) return;
  acc[x].first += v;
  ++acc[x].second;
}

LayerCurve means(const std::map<int, std::pair<double, int>>& acc) {
  LayerCurve out;
  for (const auto& [x, s] : acc) out[x] = s.first / s.second;
  return out;
}

// Per test length, a statistic of layer l (mean over heads and depth cells).
Quantity statistic(const char* ylabel, const std::vector<double> AttentionStats::*field) {
  return {ylabel, [field](const RunRecord& r, int l) {
            std::map<int, std::pair<double, int>> acc;
            for (const LengthResult& row : r.results) {
              const AttentionStats& a = row.attention;
              if (l >= a.n_layer) continue;
              for (int h = 0; h < a.n_head; ++h)
                add_point(acc, row.length, (a.*field)[static_cast<size_t>(l) * a.n_head + h]);
            }
            return means(acc);
          }};
}

// Per distance at the run's longest length, the mean centred logit of layer l.
Quantity by_distance() {
  return {"centred attention logit", [](const RunRecord& r, int l) {
            std::map<int, std::pair<double, int>> acc;
            if (r.results.empty()) return LayerCurve{};
            const int longest = r.results.back().length;
            for (const LengthResult& row : r.results) {
              const AttentionLogits& a = row.logits;
              if (row.length != longest || l >= a.n_layer) continue;
              for (int h = 0; h < a.n_head; ++h)
                for (int d = 0; d <= a.max_distance; ++d) add_point(acc, d, a.at(l, h, d));
            }
            return means(acc);
          }};
}

// Per distance, head h's bias of layer l after training.
Quantity bias_of_head(int h) {
  return {fmt::format("head {}: bias on the logit", h), [h](const RunRecord& r, int l) {
            LayerCurve out;
            const PositionBiasValues& b = r.position_bias;
            if (l >= b.n_layer || h >= b.n_head) return out;
            for (int d = 0; d <= b.max_distance; ++d) out[d] = b.at(l, h, d);
            return out;
          }};
}

// Whether run r has what the companion draws: its bias file, or attention rows of that kind.
bool has_layer_data(const RunRecord& r, LayerFigure which) {
  if (which == LayerFigure::kBias) return !r.position_bias.empty();
  for (const LengthResult& row : r.results)
    if ((which == LayerFigure::kDistance ? row.logits.n_layer : row.attention.n_layer) > 0)
      return true;
  return false;
}

// Some of the line's runs have the data and some do not (partial_layer_lines).
bool is_partial(const FigureLine& line, LayerFigure which) {
  size_t with = 0;
  for (const RunRecord* r : line.runs) with += has_layer_data(*r, which);
  return with > 0 && with < line.runs.size();
}

int n_bias_heads(const FigureSummary& fig) {
  int H = 0;
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs) H = std::max(H, r->position_bias.n_head);
  return H;
}

std::vector<Quantity> quantities(const FigureSummary& fig, LayerFigure which) {
  if (which == LayerFigure::kDistance) return {by_distance()};
  if (which == LayerFigure::kBias) {
    std::vector<Quantity> heads;
    for (int h = 0; h < n_bias_heads(fig); ++h) heads.push_back(bias_of_head(h));
    return heads;
  }
  return {statistic("mean attention entropy (nats)", &AttentionStats::entropy),
          statistic("mean largest attention probability", &AttentionStats::max_prob)};
}

int n_layers(const FigureSummary& fig, LayerFigure which) {
  int L = 0;
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs)
      if (which == LayerFigure::kBias)
        L = std::max(L, r->position_bias.n_layer);
      else
        for (const LengthResult& row : r->results)
          L = std::max(
              L, which == LayerFigure::kDistance ? row.logits.n_layer : row.attention.n_layer);
  return L;
}

// The block of (quantity q, line i, layer l) in the .dat, quantity-major, then line, then layer.
int block_of(size_t q, size_t i, int l, size_t n_lines, int L) {
  return static_cast<int>((q * n_lines + i) * L + l);
}

std::string base_of(const FigureSummary& fig, LayerFigure which) {
  return "fig" + spec_of(fig).name + "-" + layer_figure_suffix(which);
}

}  // namespace

std::string layer_figure_suffix(LayerFigure which) {
  return which == LayerFigure::kDistance ? "distance"
         : which == LayerFigure::kBias   ? "bias"
                                         : "layers";
}

std::vector<std::string> partial_layer_lines(const FigureSummary& fig, LayerFigure which) {
  std::vector<std::string> labels;
  for (const FigureLine& line : fig.lines)
    if (is_partial(line, which)) labels.push_back(line.label);
  return labels;
}

bool has_layer_figure(const FigureSummary& fig, LayerFigure which) {
  // Only the lines it would draw count: a partial line is left out (and a figure of none fails).
  bool any = false, other = false;  // other: a bias that is not ALiBi's fixed slopes
  for (const FigureLine& line : fig.lines) {
    if (is_partial(line, which)) continue;
    for (const RunRecord* r : line.runs)
      if (has_layer_data(*r, which)) {
        any = true;
        other = other || r->spec.pe != "alibi";
      }
  }
  return which == LayerFigure::kBias ? other : any;  // ALiBi's fixed slopes alone need no figure
}

std::string layer_figure_dat(const FigureSummary& fig, LayerFigure which) {
  const int L = n_layers(fig, which);
  const std::vector<Quantity> qs = quantities(fig, which);
  std::string out = fmt::format(
      "# lenlab: {} per layer; one block per (quantity, line, layer): x, mean over seeds, min, "
      "max\n",
      which == LayerFigure::kDistance ? "centred attention logits by relative distance"
      : which == LayerFigure::kBias   ? "the positional bias on the logits by distance, per head"
                                      : "attention entropy and largest probability by length");
  for (size_t q = 0; q < qs.size(); ++q)
    for (size_t i = 0; i < fig.lines.size(); ++i)
      for (int l = 0; l < L; ++l) {
        out += fmt::format("# {}, line {}, layer {}\n", qs[q].ylabel, fig.lines[i].label, l);
        std::map<int, std::vector<double>> at;  // x → each seed's value
        if (!is_partial(fig.lines[i], which))   // a partial line's block stays empty
          for (const RunRecord* r : fig.lines[i].runs)
            for (const auto& [x, v] : qs[q].curve(*r, l)) at[x].push_back(v);
        for (const auto& [x, v] : at) {
          double sum = 0;
          for (double y : v) sum += y;
          out += fmt::format("{} {:.9g} {:.9g} {:.9g}\n", x, sum / v.size(),
                             *std::min_element(v.begin(), v.end()),
                             *std::max_element(v.begin(), v.end()));
        }
        if (at.empty()) out += "0 NaN NaN NaN\n";  // an empty block keeps the numbering
        out += "\n\n";
      }
  return out;
}

std::string layer_figure_script(const FigureSummary& fig, LayerFigure which) {
  const FigureSpec& spec = spec_of(fig);
  const int L = std::max(1, n_layers(fig, which));
  const std::vector<Quantity> qs = quantities(fig, which);
  const bool distance = which != LayerFigure::kStatistics;  // x: relative distance
  const std::string base = base_of(fig, which);
  std::string s = "# lenlab figure " + gnuplot_parts::comment_text(spec.name) + ", per layer\n" +
                  "# Redraw from this folder with `gnuplot " + gnuplot_parts::comment_text(base) +
                  ".gp`.\n";
  s += "set encoding utf8\n";
  s += gnuplot_style::axes();
  s += "set style fill transparent solid 0.18 noborder\n";
  s += "set key outside below center horizontal Left reverse noenhanced samplen 2.5\n";
  s += which == LayerFigure::kDistance
           ? "set xlabel 'relative distance (tokens back), at the longest test length'\n"
       : which == LayerFigure::kBias ? "set xlabel 'relative distance (tokens back)'\n"
                                     : "set xlabel 'test length'\n";
  // The training range: distances below the tokens of a sequence at l_train, or lengths 1..l_train
  // (the first line's).
  const TrainSpec& first = fig.lines.empty() ? spec.base : fig.lines.front().spec;
  const double shade_from = distance ? 0 : 1;
  const double shade_to =
      distance ? static_cast<double>(
                     tokens_per_sequence(parse_task(first.task), first.token, first.l_train) - 1)
               : first.l_train;
  // The bias figure draws the lines whose encoding has a bias (the others have no curve); no
  // figure draws a partial line.
  const auto drawn = [&](size_t i) {
    if (is_partial(fig.lines[i], which)) return false;
    if (which != LayerFigure::kBias) return true;
    for (const RunRecord* r : fig.lines[i].runs)
      if (!r->position_bias.empty()) return true;
    return false;
  };
  std::string panels;
  for (size_t q = 0; q < qs.size(); ++q)
    for (int l = 0; l < L; ++l) {
      panels +=
          fmt::format("set title 'layer {}'\nset ylabel {}\n", l, gnuplot_quote(qs[q].ylabel));
      panels += fmt::format(
          "set object 1 rectangle from first {}, graph 0 to first {}, graph 1 behind fillcolor "
          "rgb '#e6e6e6' fillstyle solid 1.0 noborder\n",
          shade_from, shade_to);
      std::string plot = "plot ";
      for (size_t i = 0; i < fig.lines.size(); ++i)
        if (drawn(i))
          plot += fmt::format(
              "'{}.dat' index {} using 1:3:4 with filledcurves linecolor rgb '{}' notitle, ", base,
              block_of(q, i, l, fig.lines.size(), L), line_colour(i));
      for (size_t i = 0; i < fig.lines.size(); ++i)
        if (drawn(i))
          plot += fmt::format(
              "'{}.dat' index {} using 1:2 with lines linewidth 2 linecolor rgb '{}' title {}, ",
              base, block_of(q, i, l, fig.lines.size(), L), line_colour(i),
              gnuplot_quote(gnuplot_parts::line_title(spec, fig.lines[i])));
      plot += fmt::format("NaN with boxes fillcolor rgb '#e6e6e6' title '{}'\n",
                          distance ? "distances seen in training" : "training lengths");
      panels += plot;
    }
  const gnuplot_style::Canvas canvas =
      gnuplot_style::canvas(560 * L, 180 + 370 * static_cast<int>(qs.size()));
  const std::string multiplot =
      fmt::format("set multiplot layout {},{} title {} noenhanced {}\n", qs.size(), L,
                  gnuplot_quote(gnuplot_parts::figure_title(spec) +
                                (which == LayerFigure::kDistance ? ": attention logits by distance"
                                 : which == LayerFigure::kBias ? ": positional bias after training"
                                                               : ": attention by layer")),
                  canvas.title_font());
  s += "\n";
  s += gnuplot_style::png_terminal(canvas);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".png"));
  s += multiplot + panels + "unset multiplot\n";
  s += "\n";
  s += gnuplot_style::svg_terminal(canvas);
  s += fmt::format("set output {}\n", gnuplot_quote(base + ".svg"));
  s += multiplot + panels + "unset multiplot\nset output\n";
  return s;
}

bool render_layer_figure(const FigureSummary& fig, LayerFigure which,
                         const std::filesystem::path& dir, const PlotOptions& opt) {
  const std::string base = base_of(fig, which);
  write_file_atomic(dir / (base + ".dat"), layer_figure_dat(fig, which));
  write_file_atomic(dir / (base + ".gp"), layer_figure_script(fig, which));
  return run_gnuplot_script(dir, base, opt);
}

}  // namespace lenlab
