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
        "'token_accuracy', 'exact_match', 'cross_entropy', 'generated_token_accuracy', "
        "'generated_exact_match', 'attention_entropy' or 'attention_max_prob'"}},
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
  CHECK(has(
      pos, "\nx,nope," + mid + ",markov,nope,,,2,3,2000,1,3,,,,,0.25,,2,0.5,,1.5,0.3,1.25,,,,,\n"));

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
