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
