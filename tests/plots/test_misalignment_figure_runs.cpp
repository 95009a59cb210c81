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

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "report/misalignment_report.hpp"
#include "results/correlation.hpp"
#include "tests/plots/misalignment_figure_support.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;

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
