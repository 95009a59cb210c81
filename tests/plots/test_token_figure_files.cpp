// Token-task figures through the experiment machinery, from hand-made RunRecords (no training):
// the config's plot and metric (defaults and refusals), the per-length and per-depth numbers,
// the position curves, the one CSV header, the gnuplot scripts of each plot kind, the report's
// "generalizes to" and the absence of a theory overlay.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "report/report.hpp"
#include "report/theory_overlay.hpp"
#include "report/token_report.hpp"
#include "tests/plots/token_figure_support.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;
using namespace lenlab::test;

TEST_CASE("token figures: gnuplot scripts set each metric's axis") {
  const Passkey p = passkey();
  const FigureSummary acc = summarize_figure(*p.runs.fig, {1, 2}, p.runs.by_id);
  const std::string gp = figure_gnuplot_script(acc, {});
  CHECK(has(gp, "set ylabel 'token accuracy'"));
  CHECK(has(gp, "set yrange [0:1]"));
  CHECK_FALSE(has(gp, "logscale"));
  CHECK(has(gp, "set object 1 rectangle from first 1, graph 0 to first 6,"));
  CHECK(has(gp, "set xlabel 'test length'"));
  CHECK(has(figure_dat(acc, {}), "mean token accuracy over seeds"));

  const Passkey em = passkey("metric = \"exact_match\"\n");
  const FigureSummary fem = summarize_figure(*em.runs.fig, {1, 2}, em.runs.by_id);
  CHECK(has(figure_gnuplot_script(fem, {}), "set ylabel 'exact match (fraction of sequences)'"));

  const Passkey ce = passkey("metric = \"cross_entropy\"\n");
  const FigureSummary fce = summarize_figure(*ce.runs.fig, {1, 2}, ce.runs.by_id);
  const std::string gce = figure_gnuplot_script(fce, {});
  CHECK(has(gce, "set ylabel 'cross-entropy (nats)'"));
  CHECK(has(gce, "set yrange [0:1.05]"));  // every cross-entropy is 1: from 0 to it, padded
  CHECK_FALSE(has(gce, "first 0 nohead"));

  const Markov m = markov();
  const FigureSummary pos = summarize_figure(*m.runs.fig, {1, 2}, m.runs.by_id);
  const std::string gpos = figure_gnuplot_script(pos, {});
  CHECK(has(gpos, "set ylabel 'excess cross-entropy (nats)'"));
  CHECK(has(gpos, "set xlabel 'position in the sequence (at the longest test length)'"));
  CHECK(has(gpos, "set arrow from graph 0, first 0 to graph 1, first 0 nohead"));  // y = 0
  CHECK(has(gpos, "set yrange [-0.0675:0.3175]"));  // min -0.05, max 0.3, padded by 5%
  CHECK(has(gpos, "title 'positions seen in training'"));
  CHECK(has(gpos, "to first 2, graph 1"));  // l_train = 2
  CHECK(has(figure_dat(pos, {}), "\n1 0.08 0.03 0.13\n"));

  const Passkey d = passkey("plot = \"depth\"\n");
  const FigureSummary heat = summarize_figure(*d.runs.fig, {1, 2}, d.runs.by_id);
  const std::string gh = figure_gnuplot_script(heat, {});
  CHECK(has(gh, "set multiplot layout 1,2 title 'T' noenhanced"));
  CHECK(has(gh, "set cbrange [0:1]"));
  CHECK(has(gh, "set cblabel 'token accuracy' noenhanced"));
  CHECK(has(gh, "set palette defined"));
  CHECK(has(gh, "'figx.dat' index 1 using 4:5:6:7:8:9:3 with boxxyerror linecolor palette"));
  CHECK(has(gh, "set title 'pe = rope' noenhanced"));
  CHECK(has(gh, "set ytics ('0' 0, '0.5' 1, '1' 2)"));
  // Lengths 5 and 6 (columns 0 and 1) with l_train 6: every length trained, the boundary after
  // the last column.
  CHECK(has(gh, "set arrow 1 from first 1.5, graph 0"));
  CHECK(has(gh, "set output 'figx.png'"));
  CHECK(has(gh, "set output 'figx.svg'"));
  const std::string dh = figure_dat(heat, {});
  CHECK(has(dh, "\n5 0 0.95 0 0 -0.5 0.5 -0.5 0.5\n"));              // column 0, row 0
  CHECK_FALSE(has(dh.substr(0, dh.find("# pe = rope")), "\n6 1 "));  // nope's cell no run has
  CHECK(has(dh, "\n6 1 0.7 "));                                      // rope has it
}

TEST_CASE("token figures: depth and position figures are drawn as PNG and SVG") {
  if (!gnuplot_available({})) {
    MESSAGE("gnuplot is not installed: skipping the drawing of token figures");
    return;
  }
  const fs::path dir = lenlab::test::fresh_dir("token_figures", "drawn");
  const Passkey d = passkey("plot = \"depth\"\n");
  CHECK(render_figure(summarize_figure(*d.runs.fig, {1, 2}, d.runs.by_id), dir, {}));
  CHECK(fs::file_size(dir / "figx.png") > 1000);
  CHECK(lenlab::test::read_text(dir / "figx.svg").find("<svg") != std::string::npos);
  const Markov m = markov();
  const fs::path dir2 = lenlab::test::fresh_dir("token_figures", "drawn-position");
  CHECK(render_figure(summarize_figure(*m.runs.fig, {1, 2}, m.runs.by_id), dir2, {}));
  CHECK(fs::file_size(dir2 / "figx.png") > 1000);
  CHECK(fs::exists(dir2 / "figx.svg"));
  // A depth figure without any completed run still draws.
  CHECK(render_figure(summarize_figure(*d.runs.fig, {1, 2}, {}), dir, {}));
}

TEST_CASE("token figures: generalizes to is the last length before the metric first misses") {
  const std::vector<int> x = {1, 2, 3, 4, 5, 6};
  CHECK(generalizes_to(x, {1, 0.95, 0.92, 0.85, 0.95, 0.5}, "token_accuracy") == 3);
  CHECK(generalizes_to(x, {1, 1, 1, 1, 1, 0.9}, "exact_match") == 6);  // 0.9 itself reaches
  CHECK(generalizes_to(x, {0.5, 1, 1, 1, 1, 1}, "token_accuracy") == 0);
  CHECK(generalizes_to(x, {1, kNaN, 1, 1, 1, 1}, "token_accuracy") == 1);
  CHECK(generalizes_to({5, 10, 20}, {0.05, 0.1, 0.12}, "excess_ce") == 10);
  CHECK(generalizes_to({5, 10}, {-0.01, 0.5}, "excess_ce") == 5);
  CHECK(generalizes_to(x, {1, 1, 1, 1, 1, 1}, "cross_entropy") == kNoThreshold);
}

TEST_CASE("token figures: the report's token section, and no theory over them") {
  const Passkey p = passkey("plot = \"depth\"\n");
  const FigureSummary fig = summarize_figure(*p.runs.fig, {1, 2}, p.runs.by_id);
  // nope: lengths 5, 6 at 0.5 and 1: misses 0.9 at once; rope: 0.52, 0.85: misses too.
  const TokenLineStats nope = token_line_stats(fig.lines[0], "token_accuracy");
  CHECK(nope.n_seeds == 2);
  CHECK(nope.train_loss == doctest::Approx(0.375));
  CHECK(nope.within == doctest::Approx(0.75));  // l_train 6: both lengths inside
  CHECK(std::isnan(nope.beyond));
  CHECK(nope.at_longest == doctest::Approx(1.0));
  CHECK(nope.generalizes_to == 0);
  CHECK(theory_curves(fig).empty());
  // Both nope runs average 0.75 inside 1..6, below the gate's 0.99: 0 of 2 fit their range.
  CHECK(has(token_tasks_section({fig}), "| 0/2 |\n"));
  CHECK(has(token_tasks_section({fig}), "Setup: passkey"));
  CHECK(has(token_tasks_section({fig}),
            "l_train 6; tested up to length 6 (1× l_train); up to 2 "
            "seeds per line."));

  // A hand-made figure: rope keeps its accuracy to length 12, nope only to 4; l_train 4.
  FigureSpec spec;
  spec.name = "t";
  spec.title = "Copy";
  spec.vary = "pe";
  spec.metric = "token_accuracy";
  FigureSummary hand;
  hand.spec = &spec;
  const std::vector<std::pair<std::string, std::vector<double>>> curves = {
      {"nope", {1, 1, 1, 1, 0.6, 0.3}}, {"rope", {1, 1, 1, 1, 0.95, 0.91}}};
  for (const auto& [label, values] : curves) {
    FigureLine l;
    l.label = label;
    l.spec.task = "copy";
    l.spec.l_train = 4;
    l.x = {1, 2, 3, 4, 8, 12};
    l.value_mean = l.value_min = l.value_max = values;
    hand.lines.push_back(l);
  }
  const std::string section = token_tasks_section({hand});
  CHECK(has(section, "## Token tasks"));
  CHECK(has(section, "at or above 0.9 for token accuracy"));
  CHECK(has(section, "at or below 0.1 nats"));
  CHECK(has(section, "| rope | 0 | — | 1 | 0.93 | 0.91 | 12 | — |"));
  CHECK(has(section, "| nope | 0 | — | 1 | 0.45 | 0.3 | 4 | — |"));
  CHECK(has(section, "Generalizes furthest: rope (≥ 0.9 token accuracy up to length 12)"));
  CHECK(has(section, "from 0.45 (nope) to 0.93 (rope)"));
  CHECK(theory_curves(hand).empty());

  hand.lines[1].value_mean[0] = 0.2;  // rope now misses at length 1 too
  hand.lines[0].value_mean[0] = 0.2;
  CHECK(has(token_tasks_section({hand}),
            "None reaches ≥ 0.9 token accuracy even at its first "
            "tested length"));

  // The whole report: a token figure named like a paper figure is not taken for it, and its
  // numbers are in the token section; the depth figure gets its by-depth table.
  spec.name = "1a";
  const std::string report = experiment_report({hand, fig}, {});
  CHECK(has(report, "No figure of the paper with all its runs is in this folder."));
  CHECK(has(report, "### Figure 1a: Copy"));
  CHECK(has(report, "Its numbers are in [Token tasks](#token-tasks)."));
  CHECK(has(report, "| pe | depth 0 | depth 0.5 | depth 1 |"));
  CHECK(has(report, "| nope | — | — | — |"));  // nothing tested beyond l_train
  const std::string empty_report = experiment_report({}, {});
  CHECK_FALSE(has(empty_report, "## Token tasks"));

  // Runs trained together on a GPU record the group's seconds each: the group counts once.
  std::map<std::string, RunRecord> runs;
  for (const char* id : {"a", "b", "c", "d"}) {
    RunRecord r;
    r.wall_seconds = 10;
    r.models_trained_together = 4;
    runs[id] = r;
  }
  runs["cpu"].wall_seconds = 5;
  CHECK(has(experiment_report({}, runs),
            "from 5 runs (15 s of training and evaluation in all, a group of runs trained "
            "together on the GPU counted once)"));
}
