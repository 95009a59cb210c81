// The misalignment figure (plot "misalignment", paper 000's Table 1): the correlations against
// hand values, `pool` in configs (and every refusal), the runs a pooling figure plans, the points
// and coefficients from runs, and the whole path through `lenlab run`.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "core/error.hpp"
#include "lab/experiment_config.hpp"
#include "lab/misalignment_report.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "results/correlation.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// Two length figures (pe nope/rope and l_train 3/4) and a figure pooling both.
const char* kPoolConfig = R"(seeds = [1, 2]
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
[figures.a]
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

void refused(const std::string& text, const std::string& message) {
  CAPTURE(message);
  CHECK_THROWS_WITH_AS(parse_experiment_config(text, "cfg.toml"),
                       doctest::Contains(message.c_str()), UsageError);
}

}  // namespace

TEST_CASE("correlation: Pearson and Spearman against hand values, undefined where they are") {
  CHECK(pearson({1, 2, 3, 4}, {2, 4, 6, 8}) == doctest::Approx(1.0));
  CHECK(pearson({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
  CHECK(pearson({1, 2, 3}, {1, 3, 2}) == doctest::Approx(0.5));
  CHECK(spearman({1, 10, 100, 1000}, {1, 2, 3, 4}) == doctest::Approx(1.0));  // ranks only
  // Ties share their average rank: x ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4.
  CHECK(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) == doctest::Approx(4.5 / std::sqrt(22.5)));
  CHECK(std::isnan(pearson({1, 2}, {1, 2})));        // fewer than 3 pairs
  CHECK(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));  // a constant side
  CHECK(std::isnan(spearman({5, 5, 5}, {1, 2, 3})));
  CHECK_THROWS_AS(pearson({1, 2, 3}, {1, 2}), std::invalid_argument);
}

TEST_CASE("misalignment figure: pool gathers other figures' lines, and plans their runs") {
  const ExperimentConfig c = parse_experiment_config(kPoolConfig, "cfg.toml");
  const FigureSpec& m = *c.find("m");
  REQUIRE(m.n_lines() == 4);
  CHECK(m.line_label(0) == "a: nope");
  CHECK(m.line_label(3) == "b: 4");
  CHECK(m.line_spec(1, 2).pe == "rope");
  CHECK(m.line_spec(2, 1).l_train == 3);
  CHECK(m.metric == "mse");
  // Selected alone, it plans the pooled figures' runs, each once: a's nope line and b's 4 are
  // the same settings.
  const std::vector<PlannedRun> alone = plan_runs(c, {"m"}, c.seeds);
  const std::vector<PlannedRun> all = plan_runs(c, {}, c.seeds);
  CHECK(alone.size() == 6);
  CHECK(all.size() == 6);
}

TEST_CASE("misalignment figure: every misuse of plot and pool is refused, naming the key") {
  const std::string head =
      "seeds = [1]\n[defaults]\ntask = \"length\"\n[figures.a]\nvary = "
      "\"pe\"\nvalues = [\"nope\"]\n";
  refused(head + "[figures.m]\nplot = \"misalignment\"\npool = [\"zz\"]\n",
          "pool names 'zz', which is no figure of this config; valid: 'a'");
  refused(head + "[figures.m]\npool = [\"a\"]\n", "set plot = \"misalignment\"");
  refused(head + "[figures.m]\nplot = \"length\"\npool = [\"a\"]\n", "set plot = \"misalignment\"");
  refused(head + "[figures.m]\nplot = \"misalignment\"\npool = []\n", "non-empty list");
  refused(head + "[figures.m]\nplot = \"misalignment\"\npool = [\"a\"]\nl_train = 3\n",
          "'l_train' in a figure with 'pool'");
  refused(head +
              "[figures.m]\nplot = \"misalignment\"\npool = [\"a\"]\n[figures.n]\nplot = "
              "\"misalignment\"\npool = [\"m\"]\n",
          "itself a pooling figure");
  refused(
      "seeds = [1]\n[figures.c]\ntask = \"copy\"\nplot = \"misalignment\"\nvary = \"pe\"\nvalues "
      "= [\"nope\"]\n",
      "plot 'misalignment' is for the tasks with a misalignment metric");
  refused(head +
              "[figures.c]\ntask = \"copy\"\nvary = \"pe\"\nvalues = [\"nope\"]\n[figures.m]\n"
              "plot = \"misalignment\"\npool = [\"c\"]\n",
          "plot 'misalignment' is for the tasks with a misalignment metric");
}

TEST_CASE("misalignment figure: points, coefficients and the report's table from runs") {
  const ExperimentConfig c = parse_experiment_config(kPoolConfig, "cfg.toml");
  const FigureSpec& m = *c.find("m");
  std::map<std::string, RunRecord> runs;
  double value = 1;
  for (const PlannedRun& p : plan_runs(c, {"m"}, c.seeds)) {
    RunRecord r;
    r.id = p.id;
    r.spec = p.spec;
    r.status = "completed";
    r.misalignment = value;
    for (int l = 1; l <= 6; ++l) {
      LengthResult x;
      x.length = l;
      x.mse = l <= r.spec.l_train ? 0.01 * value : value * value + l;  // far: grows with value
      r.results.push_back(x);
    }
    runs[p.id] = r;
    value += 1;
  }
  const FigureSummary fig = summarize_figure(m, c.seeds, runs);
  const MisalignmentScatter& sc = fig.scatter;
  CHECK(sc.at_length == 6);
  REQUIRE(sc.points.size() == 6);  // a shared run counts once
  std::vector<double> x, y, t;
  std::set<const RunRecord*> distinct;
  for (const MisalignmentPoint& p : sc.points) {
    x.push_back(p.misalignment);
    y.push_back(p.far);
    t.push_back(p.at_train);
    distinct.insert(p.run);
    CHECK(p.far == doctest::Approx(p.misalignment * p.misalignment + 6));
  }
  CHECK(distinct.size() == 6);
  CHECK(sc.pearson_misalignment == doctest::Approx(pearson(x, y)));
  CHECK(sc.spearman_misalignment == doctest::Approx(1.0));
  CHECK(sc.pearson_train == doctest::Approx(pearson(t, y)));
  CHECK(sc.n_train == 6);
  const std::string section = misalignment_section(fig);
  CHECK(section.find("| long-short misalignment at l_train | " +
                     fmt::format("{:.2f}", sc.pearson_misalignment) + " | 1.00 | 6 |") !=
        std::string::npos);
  CHECK(section.find("| test MSE at l_train |") != std::string::npos);
  const std::string gp = figure_gnuplot_script(fig, {});
  CHECK(gp.find("with points") != std::string::npos);
  CHECK(gp.find("Spearman ρ = 1.00 over 6 runs") != std::string::npos);
  CHECK(gp.find("title 'a: nope'") != std::string::npos);
  // The CSV's last column is each run's misalignment.
  const std::string csv = figure_csv(fig);
  CHECK(csv.find(",misalignment\n") != std::string::npos);
  CHECK(csv.find(",1\n") != std::string::npos);
}

TEST_CASE("misalignment figure: lenlab run draws it and writes its table in report.md") {
  const fs::path dir = run_dir("misalignment-figure");
  write_raw(dir / "cfg.toml", kPoolConfig);
  const CliResult r = run_cli({"run", (dir / "cfg.toml").string(), "--figures", "m", "--jobs", "2",
                               "--out", (dir / "out").string()});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto rows = read_csv(dir / "out" / "figm.csv");
  REQUIRE(!rows.empty());
  std::map<std::string, std::pair<double, double>> by_run;  // misalignment, mse at length 6
  for (const auto& row : rows) {
    CHECK(!row.at("misalignment").empty());
    if (row.at("length") == "6")
      by_run[row.at("run_id")] = {std::stod(row.at("misalignment")), std::stod(row.at("mse"))};
  }
  REQUIRE(by_run.size() == 6);
  std::vector<double> x, y;
  for (const auto& [id, v] : by_run) {
    x.push_back(v.first);
    y.push_back(v.second);
  }
  const std::string report = read_text(dir / "out" / "report.md");
  CHECK(report.find(fmt::format("| long-short misalignment at l_train | {:.2f} | {:.2f} | 6 |",
                                pearson(x, y), spearman(x, y))) != std::string::npos);
  CHECK(fs::exists(dir / "out" / "figm.gp"));
  CHECK(fs::exists(dir / "out" / "figm.dat"));
}
