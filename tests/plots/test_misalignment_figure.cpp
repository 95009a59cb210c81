// The misalignment figure (plot "misalignment", paper 000's Table 1): `at_length` and `pool` in
// configs (and every refusal), the runs a pooling figure plans, the points and coefficients from
// runs, report.md's section, and the whole path through `lenlab run` (its correlations:
// test_correlation.cpp).
#include <doctest/doctest.h>

#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cli_support.hpp"
#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "report/misalignment_report.hpp"
#include "results/correlation.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// Tiny length-prediction runs: 30 steps of a one-layer d = 8 model, tested at lengths 1..6.
const char* kTinyDefaults = R"(seeds = [1, 2]
[defaults]
task = "length"
l_train = 4
l_test = 6
steps = 30
batch_size = 8
n_layer = 1
d_model = 8
n_head = 2
d_ff = 16
eval_samples = 16
)";

// Two length figures (pe nope/rope and l_train 3/4) and a figure pooling both.
const std::string kPoolConfig = std::string(kTinyDefaults) + R"([figures.a]
vary = "pe"
values = ["nope", "rope"]
[figures.b]
vary = "l_train"
values = [3, 4]
[figures.m]
title = "misalignment"
plot = "misalignment"
pool = ["a", "b"]
)";

// A misalignment figure with lines of its own (l_train 2 and 3) and figure a's pooled after them,
// its y at length 5.
const std::string kMixedConfig = std::string(kTinyDefaults) + R"([figures.a]
vary = "pe"
values = ["nope", "rope"]
[figures.m]
title = "misalignment, own and pooled lines"
plot = "misalignment"
at_length = 5
vary = "l_train"
values = [2, 3]
pool = ["a"]
)";

// The head of the refusal configs: one length figure "a" tested at 1..6.
const std::string kHead =
    "seeds = [1]\n[defaults]\ntask = \"length\"\nl_test = 6\n[figures.a]\nvary = \"pe\"\nvalues = "
    "[\"nope\"]\n";

// The config is refused with a UsageError naming the file, the figure and `message`.
void refused(const std::string& text, const std::string& figure, const std::string& message) {
  CAPTURE(text);
  CAPTURE(message);
  std::string what;
  try {
    parse_experiment_config(text, "cfg.toml");
  } catch (const UsageError& e) {
    what = e.what();
  }
  CAPTURE(what);
  CHECK(what.rfind("cfg.toml:", 0) == 0);
  CHECK(what.find("[figures." + figure + "]") != std::string::npos);
  CHECK(what.find(message) != std::string::npos);
}

// A completed run of `spec` whose misalignment is `value`, with its mse at each length 1..6:
// 0.01·value·(10 − value) within l_train (not monotone in it), value² + length beyond (so the far
// mse rises with the misalignment).
RunRecord fake_run(const PlannedRun& p, std::optional<double> value) {
  RunRecord r;
  r.id = p.id;
  r.spec = p.spec;
  r.status = "completed";
  r.misalignment = value;
  const double v = value.value_or(0);
  for (int l = 1; l <= 6; ++l) {
    LengthResult x;
    x.length = l;
    x.mse = l <= r.spec.l_train ? 0.01 * v * (10 - v) : v * v + l;
    r.results.push_back(x);
  }
  return r;
}

// Completed fake runs of every run the figure plans, misalignments 1, 2, 3, … in plan order.
std::map<std::string, RunRecord> fake_runs(const ExperimentConfig& c, const std::string& figure) {
  std::map<std::string, RunRecord> runs;
  double value = 1;
  for (const PlannedRun& p : plan_runs(c, {figure}, c.seeds)) runs[p.id] = fake_run(p, value++);
  return runs;
}

}  // namespace

TEST_CASE("misalignment figure: at_length defaults to the lines' longest test length") {
  const ExperimentConfig c = parse_experiment_config(
      kHead +
          "[figures.m]\nplot = \"misalignment\"\nvary = \"lengths\"\nvalues = [\"1..6\", "
          "\"2,4,6\"]\n[figures.n]\nplot = \"misalignment\"\nat_length = 4\nvary = "
          "\"pe\"\nvalues = [\"nope\"]\n",
      "cfg.toml");
  CHECK(c.find("m")->at_length == 6);
  CHECK(c.find("n")->at_length == 4);
  CHECK(c.find("a")->at_length == 0);  // not a misalignment figure
  CHECK(c.find("m")->metric == "mse");
}

TEST_CASE("misalignment figure: pool gathers other figures' lines, and plans their runs") {
  const ExperimentConfig c = parse_experiment_config(kPoolConfig, "cfg.toml");
  const FigureSpec& m = *c.find("m");
  REQUIRE(m.n_lines() == 4);
  CHECK(m.line_label(0) == "a: nope");
  CHECK(m.line_label(3) == "b: 4");
  CHECK(m.is_pooled(0));
  CHECK(m.line_spec(1, 2).pe == "rope");
  CHECK(m.line_spec(2, 1).l_train == 3);
  CHECK(m.metric == "mse");
  CHECK(m.at_length == 6);
  // Selected alone, it plans the pooled figures' runs, each once: a's nope line and b's 4 are
  // the same settings.
  CHECK(plan_runs(c, {"m"}, c.seeds).size() == 6);
  CHECK(plan_runs(c, {}, c.seeds).size() == 6);

  // Lines of its own come first, then the pooled ones.
  const ExperimentConfig mixed = parse_experiment_config(kMixedConfig, "cfg.toml");
  const FigureSpec& mm = *mixed.find("m");
  REQUIRE(mm.n_lines() == 4);
  CHECK(mm.line_label(0) == "2");
  CHECK(!mm.is_pooled(1));
  CHECK(mm.line_spec(1, 1).l_train == 3);
  CHECK(mm.line_label(2) == "a: nope");
  CHECK(mm.is_pooled(2));
  CHECK(mm.line_spec(3, 2).pe == "rope");
  CHECK(mm.line_spec(3, 2).seed == 2);
  CHECK(mm.at_length == 5);
  std::set<std::string> ids;
  for (const PlannedRun& p : plan_runs(mixed, {"m"}, mixed.seeds)) ids.insert(p.id);
  CHECK(ids.size() == 8);  // 4 lines × 2 seeds, none shared
  for (const PlannedRun& p : plan_runs(mixed, {"a"}, mixed.seeds)) CHECK(ids.count(p.id) == 1);
  CHECK(plan_runs(mixed, {"a"}, mixed.seeds).size() == 4);
}

TEST_CASE("misalignment figure: every misuse of plot, at_length and pool is refused, naming it") {
  // pool
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [\"zz\"]\n", "m",
          "'pool' names 'zz', which is no figure of this config; valid: 'a'");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [1]\n", "m",
          "'pool' names a value that is not a string");
  refused(kHead +
              "[figures.m]\nplot = \"misalignment\"\npool = [\"a\"]\n[figures.n]\nplot = "
              "\"misalignment\"\npool = [\"m\"]\n",
          "n", "'pool' names 'm', which is itself a pooling figure; valid: 'a'");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [\"m\"]\n", "m",
          "which is itself a pooling figure");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [\"a\", \"a\"]\n", "m",
          "'pool' names 'a' twice");
  refused(kHead + "[figures.m]\npool = [\"a\"]\n", "m", "set plot = \"misalignment\"");
  refused(kHead + "[figures.m]\nplot = \"length\"\npool = [\"a\"]\n", "m",
          "'pool' gathers runs for a misalignment figure; set plot = \"misalignment\"");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = []\n", "m",
          "'pool' must be a non-empty list of figure names");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = \"a\"\n", "m",
          "'pool' must be a non-empty list of figure names");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [\"a\"]\nl_train = 3\n", "m",
          "'l_train' in a figure with 'pool' and no 'vary'");
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\npool = [\"a\"]\nvary = \"pe\"\n", "m",
          "needs 'vary' (a setting name) and a non-empty 'values' list");
  // A pooled line (or a line of its own) whose task has no misalignment.
  refused(kHead +
              "[figures.c]\ntask = \"copy\"\nvary = \"pe\"\nvalues = [\"nope\"]\n[figures.m]\n"
              "plot = \"misalignment\"\npool = [\"c\"]\n",
          "m",
          "plot 'misalignment' is for the tasks with a misalignment metric (mean, length, sum, "
          "markov) only, but pooled line 'c: nope' (from 'pool') trains task 'copy'");
  refused(
      "seeds = [1]\n[figures.c]\ntask = \"copy\"\nplot = \"misalignment\"\nvary = \"pe\"\nvalues "
      "= [\"nope\"]\n",
      "c", "plot 'misalignment' is for the tasks with a misalignment metric");
  // at_length
  refused(kHead + "[figures.m]\nat_length = 6\nvary = \"pe\"\nvalues = [\"rope\"]\n", "m",
          "'at_length' is for plot = \"misalignment\" only (the test length of each run's y); "
          "this figure's plot is 'length'");
  for (const char* bad : {"0", "-3", "2.5", "\"6\"", "9999999999"})
    refused(kHead + "[figures.m]\nplot = \"misalignment\"\nat_length = " + bad +
                "\nvary = \"pe\"\nvalues = [\"rope\"]\n",
            "m", "'at_length' must be a test length of every line, an integer >= 1");
  refused(kHead +
              "[figures.m]\nplot = \"misalignment\"\nat_length = 7\nvary = \"pe\"\nvalues = "
              "[\"rope\"]\n",
          "m",
          "'at_length' 7 is not a test length of line pe = rope (it tests 1..6); set at_length "
          "to one every line tests (the longest: 6)");
  refused(kHead + "[figures.b]\nl_test = 4\nvary = \"pe\"\nvalues = [\"rope\"]\n" +
              "[figures.m]\nplot = \"misalignment\"\nat_length = 5\npool = [\"a\", \"b\"]\n",
          "m",
          "'at_length' 5 is not a test length of pooled line 'b: rope' (from 'pool') (it tests "
          "1..4); set at_length to one every line tests (the longest: 4)");
  // The default is the longest test length, which the shorter line lacks.
  refused(kHead + "[figures.m]\nplot = \"misalignment\"\nvary = \"l_test\"\nvalues = [6, 9]\n", "m",
          "'at_length' (by default the lines' longest test length) 9 is not a test length of "
          "line l_test = 6 (it tests 1..6); set at_length to one every line tests (the "
          "longest: 6)");
  refused(kHead +
              "[figures.m]\nplot = \"misalignment\"\nvary = \"lengths\"\nvalues = [\"1..3\", "
              "\"5,6\"]\n",
          "m", "no length is tested by every line");
}

TEST_CASE("misalignment figure: points, coefficients and the report's table from runs") {
  const ExperimentConfig c = parse_experiment_config(kPoolConfig, "cfg.toml");
  const FigureSpec& m = *c.find("m");
  const std::map<std::string, RunRecord> runs = fake_runs(c, "m");
  const FigureSummary fig = summarize_figure(m, c.seeds, runs);
  const MisalignmentScatter& sc = fig.scatter;
  CHECK(sc.at_length == 6);
  CHECK(fig.lines[0].pooled);
  REQUIRE(sc.points.size() == 6);  // a shared run counts once
  std::vector<double> x, y, t;
  std::set<const RunRecord*> distinct;
  for (const MisalignmentPoint& p : sc.points) {
    x.push_back(p.misalignment);
    y.push_back(p.far);
    t.push_back(p.at_train);
    distinct.insert(p.run);
    CHECK(p.far == doctest::Approx(p.misalignment * p.misalignment + 6));
    CHECK(p.at_train ==
          doctest::Approx(0.01 * p.misalignment * (10 - p.misalignment)));  // at its l_train
  }
  CHECK(distinct.size() == 6);
  CHECK(sc.pearson_misalignment == doctest::Approx(pearson(x, y)));
  CHECK(sc.spearman_misalignment == doctest::Approx(1.0));
  CHECK(sc.pearson_train == doctest::Approx(pearson(t, y)));
  CHECK(sc.spearman_train == doctest::Approx(spearman(t, y)));
  CHECK(sc.n_train == 6);
  CHECK(sc.without_far == 0);
  const std::string section = misalignment_section(fig);
  CHECK(section.find("| predictor | Pearson r | Spearman ρ | n |") != std::string::npos);
  // Each coefficient with its bootstrap interval, which holds it; ρ = 1 in every resample.
  CHECK(sc.pearson_misalignment_ci.lo <= sc.pearson_misalignment);
  CHECK(sc.pearson_misalignment_ci.hi >= sc.pearson_misalignment);
  CHECK(section.find(fmt::format("| long-short misalignment at l_train | {:.2f} [{:.2f}, {:.2f}] "
                                 "| 1.00 [1.00, 1.00] | 6 |",
                                 sc.pearson_misalignment, sc.pearson_misalignment_ci.lo,
                                 sc.pearson_misalignment_ci.hi)) != std::string::npos);
  CHECK(section.find(fmt::format("| test MSE at l_train | {:.2f} [", sc.pearson_train)) !=
        std::string::npos);
  // A scalar task's misalignment has no divergence part: no such row, no decomposition.
  CHECK(sc.n_divergence == 0);
  CHECK(section.find("divergence part") == std::string::npos);
  CHECK(section.find("the misalignment predicts the test MSE at length 6 better") !=
        std::string::npos);
  CHECK(section.find("runs with more misalignment did worse there") != std::string::npos);
  CHECK(section.find("not a cause") != std::string::npos);
  const std::string gp = figure_gnuplot_script(fig, {});
  CHECK(gp.find("with points") != std::string::npos);
  CHECK(gp.find("Spearman ρ = 1.00 over 6 runs") != std::string::npos);
  CHECK(gp.find("title 'a: nope'") != std::string::npos);
  CHECK(gp.find("set logscale y") != std::string::npos);  // the MSE, all positive
  CHECK(gp.find("set logscale x") == std::string::npos);  // 1..6: under two decades
  // The CSV: the rows of a length plot, the last column each run's misalignment.
  const std::string csv = figure_csv(fig);
  CHECK(csv.find(",misalignment,misalignment_divergence,misalignment_entropy,"
                 "misalignment_perfect,tau\n") != std::string::npos);
  CHECK(csv.find(",1,,,,\n") != std::string::npos);
  size_t rows = 0;
  for (char ch : csv) rows += ch == '\n';
  CHECK(rows == 1 + 4 * 2 * 6);  // header, then (line, seed, length): shared runs under each line
}

TEST_CASE(
    "misalignment figure: at_length picks the y, and runs without a value or a y are left out") {
  const ExperimentConfig c = parse_experiment_config(kMixedConfig, "cfg.toml");
  const FigureSpec& m = *c.find("m");
  std::map<std::string, RunRecord> runs = fake_runs(c, "m");
  REQUIRE(runs.size() == 8);
  auto it = runs.begin();            // ids sort by l_train: these two are line l_train = 2's
  it->second.misalignment.reset();   // a run without the metric: no point
  (++it)->second.results.resize(4);  // a run cut short before length 5: no point, counted
  REQUIRE(runs.begin()->second.spec.l_train == 2);
  REQUIRE(it->second.spec.l_train == 2);
  const FigureSummary fig = summarize_figure(m, c.seeds, runs);
  const MisalignmentScatter& sc = fig.scatter;
  CHECK(sc.at_length == 5);
  CHECK(sc.without_far == 1);
  REQUIRE(sc.points.size() == 6);
  for (const MisalignmentPoint& p : sc.points) {
    CHECK(p.far == doctest::Approx(p.misalignment * p.misalignment + 5));
    CHECK(fig.lines[p.line].pooled == (p.line >= 2));
  }
  const std::string section = misalignment_section(fig);
  CHECK(section.find("at length 5") != std::string::npos);
  CHECK(section.find("1 run(s) with a misalignment have no result at length 5") !=
        std::string::npos);
  const std::string gp = figure_gnuplot_script(fig, {});
  // Line l_train = 2 lost both its runs (the first two ids) above: no point, so no key entry.
  CHECK(gp.find("title 'l_train = 2'") == std::string::npos);
  CHECK(gp.find("title 'l_train = 3'") != std::string::npos);  // its own line
  CHECK(gp.find("title 'a: rope'") != std::string::npos);      // a pooled one
  CHECK(gp.find("at length 5") != std::string::npos);
  // The CSV keeps every completed run's rows, the run without a value with an empty last cell.
  const std::string csv = figure_csv(fig);
  CHECK(csv.find("," + runs.begin()->first + ",") != std::string::npos);
  CHECK(csv.find(",\n") != std::string::npos);

  // A FigureSpec made by hand must name at_length.
  FigureSpec bare = m;
  bare.at_length = 0;
  CHECK_THROWS_AS(summarize_figure(bare, c.seeds, runs), std::invalid_argument);
}

TEST_CASE("misalignment figure: report.md says undefined, leaves out a missing predictor") {
  FigureSpec spec;
  spec.name = "m";
  spec.plot = "misalignment";
  spec.metric = "mse";
  spec.at_length = 20;
  RunRecord run;
  FigureSummary fig;
  fig.spec = &spec;
  fig.scatter.at_length = 20;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two runs: no coefficient is defined.
  fig.scatter.points = {{0, &run, 1.0, 0.1, 2.0}, {0, &run, 2.0, 0.2, 3.0}};
  fig.scatter.pearson_misalignment = fig.scatter.spearman_misalignment = nan;
  fig.scatter.pearson_train = fig.scatter.spearman_train = nan;
  fig.scatter.n_train = 2;
  std::string s = misalignment_section(fig);
  CHECK(s.find("| long-short misalignment at l_train | undefined | undefined | 2 |") !=
        std::string::npos);
  CHECK(s.find("| test MSE at l_train | undefined | undefined | 2 |") != std::string::npos);
  CHECK(s.find("cannot be compared") != std::string::npos);
  CHECK(s.find("predicts") == std::string::npos);
  // Not tested at l_train: that row is left out, and the report says why.
  fig.scatter.n_train = 0;
  s = misalignment_section(fig);
  CHECK(s.find("at l_train | undefined") != std::string::npos);
  CHECK(s.find("test MSE at l_train |") == std::string::npos);
  CHECK(s.find("No run was tested at its training length") != std::string::npos);
  // Which predictor wins, and the direction, for a loss and for an accuracy.
  fig.scatter.n_train = 2;
  fig.scatter.pearson_misalignment = -0.5;
  fig.scatter.pearson_train = 0.75;
  s = misalignment_section(fig);
  CHECK(s.find("the test MSE at l_train predicts the test MSE at length 20 better (|r| 0.75 "
               "against 0.50); runs with more misalignment did better there") != std::string::npos);
  spec.metric = "token_accuracy";
  s = misalignment_section(fig);
  CHECK(s.find("runs with more misalignment did worse there") != std::string::npos);
  fig.scatter.points.clear();
  CHECK(misalignment_section(fig).find("nothing to correlate") != std::string::npos);
}

TEST_CASE("misalignment figure: lenlab run draws it and writes its table in report.md") {
  const fs::path dir = run_dir("misalignment-figure");
  write_raw(dir / "cfg.toml", kMixedConfig);
  const CliResult r = run_cli({"run", (dir / "cfg.toml").string(), "--figures", "m", "--jobs", "2",
                               "--out", (dir / "out").string()});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto rows = read_csv(dir / "out" / "figm.csv");
  REQUIRE(!rows.empty());
  // Per run: its misalignment, its mse at at_length 5 and at its l_train.
  struct Point {
    double misalignment = 0, far = 0, at_train = 0;
  };
  std::map<std::string, Point> by_run;
  std::set<std::string> lines;
  for (const auto& row : rows) {
    CHECK(!row.at("misalignment").empty());
    lines.insert(row.at("line"));
    Point& p = by_run[row.at("run_id")];
    p.misalignment = std::stod(row.at("misalignment"));
    if (row.at("length") == "5") p.far = std::stod(row.at("mse"));
    if (row.at("length") == row.at("l_train")) p.at_train = std::stod(row.at("mse"));
  }
  CHECK(lines == std::set<std::string>{"2", "3", "a: nope", "a: rope"});
  REQUIRE(by_run.size() == 8);
  std::vector<double> x, y, t;
  for (const auto& [id, p] : by_run) {
    x.push_back(p.misalignment);
    y.push_back(p.far);
    t.push_back(p.at_train);
  }
  const std::string report = read_text(dir / "out" / "report.md");
  CAPTURE(report);
  CHECK(report.find("at length 5") != std::string::npos);
  CHECK(report.find(fmt::format("| long-short misalignment at l_train | {:.2f} [",
                                pearson(x, y))) != std::string::npos);
  CHECK(report.find(fmt::format("] | {:.2f} [", spearman(x, y))) != std::string::npos);
  CHECK(report.find(fmt::format("| test MSE at l_train | {:.2f} [", pearson(t, y))) !=
        std::string::npos);
  CHECK(fs::exists(dir / "out" / "figm.gp"));
  const std::string dat = read_text(dir / "out" / "figm.dat");
  CHECK(dat.find("test MSE at length 5") != std::string::npos);
}
