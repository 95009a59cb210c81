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
#include "tests/support/test_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A config with one figure [figures.x] of `settings` (TOML lines) over two seeds.
ExperimentConfig config_of(const std::string& settings) {
  return parse_experiment_config(
      "seeds = [1, 2]\n[defaults]\nl_train = 6\nl_test = 8\n[figures.x]\ntitle = \"T\"\n" +
          settings,
      "cfg.toml");
}

LengthResult token_row(int length, double depth, double accuracy, double exact = 0, double ce = 1,
                       double excess = kNaN) {
  LengthResult r;
  r.token = true;
  r.length = length;
  r.depth = depth;
  r.token_accuracy = accuracy;
  r.exact_match = exact;
  r.cross_entropy = ce;
  r.excess_ce = excess;
  r.n_sequences = 10;
  r.n_answer_tokens = 4;
  return r;
}

// Completed runs of a figure, keyed by their ids as summarize_figure looks them up.
struct Runs {
  const FigureSpec* fig;
  std::map<std::string, RunRecord> by_id;
  RunRecord& add(size_t line, uint64_t seed, std::vector<LengthResult> rows,
                 double train_loss = 0.25) {
    RunRecord r;
    r.spec = fig->line_spec(line, seed);
    r.id = run_id(r.spec);
    r.status = "completed";
    r.final_train_loss = train_loss;
    r.results = std::move(rows);
    return by_id[r.id] = r;
  }
};

// Passkey, lines nope and rope, seeds 1 and 2, lengths 5 and 6 at depths 0, 0.5, 1; seed 1 has a
// cell at random depths at length 5 and misses depth 1 at length 6; seed 2 of nope stops at 5.
struct Passkey {
  ExperimentConfig config;
  Runs runs;
};
Passkey passkey(const std::string& extra = "") {
  Passkey p{config_of("task = \"passkey\"\nvary = \"pe\"\nvalues = [\"nope\", \"rope\"]\n" + extra),
            {}};
  p.runs.fig = &p.config.figures.front();
  for (size_t line = 0; line < 2; ++line) {
    const double shift = line == 0 ? 0.0 : 0.05;
    p.runs.add(line, 1,
               {token_row(5, kNoDepth, 0.2 + shift, 0.1), token_row(5, 0, 0.9 + shift / 2, 0.8),
                token_row(5, 0.5, 0.6 + shift, 0.4), token_row(5, 1, 0.3 + shift, 0.2),
                token_row(6, 0, 1.0, 1.0), token_row(6, 0.5, 1.0, 0.5)},
               0.5);
    std::vector<LengthResult> seed2 = {token_row(5, 0, 1.0, 1.0), token_row(5, 0.5, 0.5, 0.25),
                                       token_row(5, 1, 0.0, 0.0)};
    if (line == 1)
      for (double d : {0.0, 0.5, 1.0}) seed2.push_back(token_row(6, d, 0.7, 0.1));
    p.runs.add(line, 2, seed2, 0.25);
  }
  return p;
}

// Markov, one line, plot "position": two seeds, three positions at test length 3.
struct Markov {
  ExperimentConfig config;
  Runs runs;
};
Markov markov() {
  Markov m{config_of("task = \"markov\"\nvary = \"pe\"\nvalues = [\"nope\"]\nplot = "
                     "\"position\"\nl_train = 2\nl_test = 3\n"),
           {}};
  m.runs.fig = &m.config.figures.front();
  const double ce[2][3] = {{2.8, 1.5, 1.0}, {2.9, 1.3, 1.25}};
  const double entropy[3] = {2.77, 1.2, 1.05};
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    RunRecord& r = m.runs.add(0, seed, {token_row(3, kNoDepth, 0.5, 0.1, 1.9, 0.1)});
    for (int t = 0; t < 3; ++t)
      r.positions.push_back({t + 1, ce[seed - 1][t], entropy[t], 0.25 * (t + 1)});
  }
  return m;
}

std::string error_of(const std::string& settings) {
  try {
    config_of(settings);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("token figures: a figure's metric defaults to its task's") {
  const std::string pe = "vary = \"pe\"\nvalues = [\"nope\", \"rope\"]\n";
  CHECK(config_of("task = \"length\"\n" + pe).figures[0].metric == "mse");
  CHECK(config_of("task = \"copy\"\n" + pe).figures[0].metric == "token_accuracy");
  CHECK(config_of("task = \"passkey\"\n" + pe).figures[0].metric == "token_accuracy");
  CHECK(config_of("task = \"markov\"\n" + pe).figures[0].metric == "excess_ce");
  CHECK(config_of("task = \"markov\"\nplot = \"position\"\n" + pe).figures[0].metric ==
        "excess_ce");
  CHECK(config_of("task = \"markov\"\nmetric = \"token_accuracy\"\n" + pe).figures[0].metric ==
        "token_accuracy");
  const ExperimentConfig depth =
      config_of("task = \"passkey\"\nplot = \"depth\"\nmetric = \"exact_match\"\n" + pe);
  CHECK(depth.figures[0].plot == "depth");
  CHECK(depth.figures[0].metric == "exact_match");
  CHECK(config_of("task = \"length\"\n" + pe).figures[0].plot == "length");
  // Lines of different token tasks share a metric when it is named.
  CHECK(config_of("vary = \"task\"\nvalues = [\"copy\", \"markov\"]\nmetric = \"cross_entropy\"\n")
            .figures[0]
            .metric == "cross_entropy");
  // plot and metric are not run settings: the runs are those of the same figure without them.
  const ExperimentConfig plain = config_of("task = \"passkey\"\n" + pe);
  CHECK(plan_runs(depth, {}, {1})[1].id == plan_runs(plain, {}, {1})[1].id);
}

TEST_CASE("token figures: a plot or metric a line's task does not have is refused, by name") {
  const std::string pe = "vary = \"pe\"\nvalues = [\"nope\"]\n";
  struct Bad {
    std::string settings;
    std::vector<std::string> says;
  };
  const std::vector<Bad> bad = {
      {"task = \"copy\"\nplot = \"heat\"\n" + pe,
       {"cfg.toml:8 [figures.x]", "unknown plot 'heat'",
        "'length', 'depth', 'position', 'misalignment' or 'temperature'"}},
      {"task = \"copy\"\nmetric = \"acc\"\n" + pe,
       {"cfg.toml:8 [figures.x]", "unknown metric 'acc'", "'mse', 'token_accuracy'"}},
      {"task = \"copy\"\nplot = 3\n" + pe, {"'plot' must be a string"}},
      {"task = \"length\"\nmetric = \"token_accuracy\"\n" + pe,
       {"metric 'token_accuracy'", "task 'length'", "line pe = nope",
        "valid metrics for length: "
        "'mse'"}},
      {"task = \"copy\"\nmetric = \"mse\"\n" + pe,
       {"metric 'mse'", "task 'copy'",
        "'token_accuracy', 'exact_match', 'cross_entropy', 'attention_entropy' or "
        "'attention_max_prob'"}},
      {"task = \"copy\"\nmetric = \"excess_ce\"\n" + pe, {"metric 'excess_ce'", "task 'copy'"}},
      {"task = \"copy\"\nplot = \"depth\"\n" + pe,
       {"plot 'depth' is for passkey only", "task 'copy'", "valid plots for copy: 'length'"}},
      {"task = \"passkey\"\nplot = \"position\"\n" + pe,
       {"plot 'position' is for markov and text only", "'length', 'depth' or 'temperature'"}},
      {"task = \"length\"\nplot = \"depth\"\n" + pe, {"plot 'depth'", "task 'length'"}},
      {"task = \"markov\"\nplot = \"position\"\nmetric = \"exact_match\"\n" + pe,
       {"metric 'exact_match' with plot 'position'", "'excess_ce'", "'bits_per_char'"}},
      {"task = \"markov\"\nplot = \"position\"\nmetric = \"perplexity\"\n" + pe,
       {"metric 'perplexity' is not one of task 'markov'"}},
      {"vary = \"task\"\nvalues = [\"copy\", \"markov\"]\n",
       {"different default metrics", "token_accuracy", "excess_ce"}},
      {"vary = \"task\"\nvalues = [\"mean\", \"copy\"]\nmetric = \"token_accuracy\"\n",
       {"metric 'token_accuracy'", "task 'mean'"}},
      {"vary = \"task\"\nvalues = [\"copy\", \"passkey\"]\nplot = \"depth\"\n",
       {"plot 'depth'", "line task = copy"}},
      {"vary = \"task\"\nvalues = [\"copi\"]\n", {"[figures.x]: line task = copi", "copi"}},
  };
  for (const Bad& b : bad) {
    const std::string e = error_of(b.settings);
    for (const std::string& part : b.says) CHECK_MESSAGE(has(e, part), e, " lacks: ", part);
  }
}

TEST_CASE("token figures: a passkey run's value at a length is the mean over its depths") {
  const Passkey p = passkey();
  const FigureSummary fig = summarize_figure(*p.runs.fig, {1, 2}, p.runs.by_id);
  REQUIRE(fig.lines.size() == 2);
  const FigureLine& nope = fig.lines[0];
  CHECK(nope.runs.size() == 2);
  CHECK(nope.x == std::vector<int>{5, 6});
  // Length 5: seed 1 (0.2 + 0.9 + 0.6 + 0.3) / 4 = 0.5 (its random-depth cell counts), seed 2
  // (1 + 0.5 + 0) / 3 = 0.5; length 6: seed 1 alone (seed 2 stopped at 5).
  CHECK(nope.value_mean[0] == doctest::Approx(0.5));
  CHECK(nope.value_min[0] == doctest::Approx(0.5));
  CHECK(nope.value_max[0] == doctest::Approx(0.5));
  CHECK(nope.value_mean[1] == doctest::Approx(1.0));
  // rope, length 5: seed 1 (0.25 + 0.925 + 0.65 + 0.35) / 4 = 0.54375, seed 2 0.5;
  // length 6: seed 1 1.0, seed 2 0.7.
  const FigureLine& rope = fig.lines[1];
  CHECK(rope.value_mean[0] == doctest::Approx((0.54375 + 0.5) / 2));
  CHECK(rope.value_min[0] == doctest::Approx(0.5));
  CHECK(rope.value_max[0] == doctest::Approx(0.54375));
  CHECK(rope.value_mean[1] == doctest::Approx(0.85));
  CHECK(rope.value_min[1] == doctest::Approx(0.7));
  CHECK(rope.depths.empty());  // a length plot has no grid
  CHECK(rope.grid.empty());

  // Another metric: exact match, nope at length 5: seed 1 (0.1 + 0.8 + 0.4 + 0.2) / 4 = 0.375,
  // seed 2 (1 + 0.25 + 0) / 3 = 0.41666….
  const Passkey em = passkey("metric = \"exact_match\"\n");
  const FigureSummary fem = summarize_figure(*em.runs.fig, {1, 2}, em.runs.by_id);
  CHECK(fem.lines[0].value_mean[0] == doctest::Approx((0.375 + 1.25 / 3) / 2));
  CHECK(fem.lines[0].value_max[0] == doctest::Approx(1.25 / 3));
}

TEST_CASE("token figures: a depth plot holds a length × depth grid of seed means") {
  const Passkey p = passkey("plot = \"depth\"\n");
  const FigureSummary fig = summarize_figure(*p.runs.fig, {1, 2}, p.runs.by_id);
  const FigureLine& nope = fig.lines[0];
  CHECK(nope.depths == std::vector<double>{0, 0.5, 1});  // the random-depth cell has no place
  REQUIRE(nope.grid.size() == 2 * 3);
  CHECK(nope.grid[0] == doctest::Approx((0.9 + 1.0) / 2));  // length 5, depth 0
  CHECK(nope.grid[1] == doctest::Approx((0.6 + 0.5) / 2));  // length 5, depth 0.5
  CHECK(nope.grid[2] == doctest::Approx((0.3 + 0.0) / 2));  // length 5, depth 1
  CHECK(nope.grid[3] == doctest::Approx(1.0));              // length 6, depth 0: seed 1 only
  CHECK(nope.grid[4] == doctest::Approx(1.0));
  CHECK(std::isnan(nope.grid[5]));  // length 6, depth 1: no seed has it
  const FigureLine& rope = fig.lines[1];
  CHECK(rope.grid[5] == doctest::Approx(0.7));
  CHECK(rope.grid[3] == doctest::Approx((1.0 + 0.7) / 2));
  // The per-length curve is the same as the length plot's.
  CHECK(rope.value_mean[1] == doctest::Approx(0.85));
}

TEST_CASE("token figures: a position plot draws each position's excess cross-entropy") {
  const Markov m = markov();
  const FigureSummary fig = summarize_figure(*m.runs.fig, {1, 2}, m.runs.by_id);
  const FigureLine& line = fig.lines.front();
  CHECK(line.x == std::vector<int>{1, 2, 3});
  // Excess per position: seed 1 0.03, 0.3, -0.05; seed 2 0.13, 0.1, 0.2.
  CHECK(line.value_mean[0] == doctest::Approx(0.08));
  CHECK(line.value_mean[1] == doctest::Approx(0.2));
  CHECK(line.value_mean[2] == doctest::Approx(0.075));
  CHECK(line.value_min[0] == doctest::Approx(0.03));
  CHECK(line.value_min[2] == doctest::Approx(-0.05));
  CHECK(line.value_max[1] == doctest::Approx(0.3));
  CHECK(line.value_max[2] == doctest::Approx(0.2));
}

TEST_CASE("token figures: one CSV header for every figure, token cells filled, others empty") {
  const std::string header =
      "figure,line,run_id,task,pe,reparam,reparam_shift,l_train,l_test,steps,seed,length,mse,"
      "mean_prediction,mean_target,mse_reparam,final_train_loss,depth,position,token_accuracy,"
      "exact_match,cross_entropy,excess_ce,entropy,misalignment,misalignment_divergence,"
      "misalignment_entropy,misalignment_perfect,tau\n";
  const Passkey p = passkey();
  const FigureSummary fig = summarize_figure(*p.runs.fig, {1, 2}, p.runs.by_id);
  const std::string csv = figure_csv(fig);
  REQUIRE(csv.rfind(header, 0) == 0);
  // 2 lines: 6 + 3 and 6 + 6 rows.
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 9 + 12);
  const std::string id = fig.lines[0].runs[0]->id;
  CHECK(
      has(csv, "\nx,nope," + id + ",passkey,nope,,,6,8,2000,1,5,,,,,0.5,0.5,,0.6,0.4,1,,,,,,,\n"));
  CHECK(has(csv, "\nx,nope," + id + ",passkey,nope,,,6,8,2000,1,5,,,,,0.5,,,0.2,0.1,1,,,,,,,\n"));

  const Markov m = markov();
  const std::string pos = figure_csv(summarize_figure(*m.runs.fig, {1, 2}, m.runs.by_id));
  REQUIRE(pos.rfind(header, 0) == 0);
  CHECK(std::count(pos.begin(), pos.end(), '\n') == 1 + 2 * 3);  // positions only
  const std::string mid = run_id(m.runs.fig->line_spec(0, 1));
  CHECK(has(pos,
            "\nx,nope," + mid + ",markov,nope,,,2,3,2000,1,3,,,,,0.25,,2,0.5,,1.5,0.3,1.2,,,,,\n"));

  // A scalar figure: today's columns and numbers, the token cells empty.
  ExperimentConfig sc = config_of("task = \"length\"\nvary = \"pe\"\nvalues = [\"nope\"]\n");
  Runs runs{&sc.figures.front(), {}};
  LengthResult a;
  a.length = 2;
  a.mse = 0.125;
  a.mean_prediction = 1.75;
  a.mean_target = 2;
  a.mse_reparam = 0.5;
  runs.add(0, 1, {a});
  const std::string scalar = figure_csv(summarize_figure(sc.figures.front(), {1}, runs.by_id));
  CHECK(
      has(scalar, ",length,nope,\"identity\",0,6,8,2000,1,2,0.125,1.75,2,0.5,0.25,,,,,,,,,,,,\n"));
  // With the run's misalignment, its cell holds it (a scalar task's has no parts).
  runs.by_id.begin()->second.misalignment = 0.375;
  const std::string with = figure_csv(summarize_figure(sc.figures.front(), {1}, runs.by_id));
  CHECK(has(with, ",0.125,1.75,2,0.5,0.25,,,,,,,,0.375,,,,\n"));
  // A markov run's parts and a perfect model's value follow it.
  RunRecord& r = runs.by_id.begin()->second;
  r.misalignment_divergence = 0.125;
  r.misalignment_entropy = 0.25;
  r.misalignment_perfect = 0.5;
  const std::string parts = figure_csv(summarize_figure(sc.figures.front(), {1}, runs.by_id));
  CHECK(has(parts, ",0.375,0.125,0.25,0.5,\n"));
}

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
  CHECK(has(gh, "'figx.dat' index 1 using 1:2:4:5:6:7:3 with boxxyerror linecolor palette"));
  CHECK(has(gh, "set title 'pe = rope' noenhanced"));
  CHECK(has(gh, "set ytics (0, 0.5, 1)"));
  // Lengths 5 and 6 with l_train 6: every length trained, the boundary after the last cell.
  CHECK(has(gh, "set arrow 1 from first 6.5, graph 0"));
  CHECK(has(gh, "set output 'figx.png'"));
  CHECK(has(gh, "set output 'figx.svg'"));
  const std::string dh = figure_dat(heat, {});
  CHECK(has(dh, "\n5 0 0.95 4.5 5.5 -0.25 0.25\n"));
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
  CHECK(has(section, "| rope | 0 | — | 1 | 0.93 | 0.91 | 12 |"));
  CHECK(has(section, "| nope | 0 | — | 1 | 0.45 | 0.3 | 4 |"));
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
