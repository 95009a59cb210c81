// report.md's method comparison (report/comparison_report.hpp): ranks by the metric beyond l_train
// in the metric's direction, marks only differences beyond the seed spread, and the config's
// `baseline` checks.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "plots/gnuplot_compare.hpp"
#include "report/comparison_report.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;

namespace {

// A run of l_train 2 whose metric is `within` at lengths 1..2 and `beyond` at 3..4.
RunRecord run(bool token, double within, double beyond) {
  RunRecord r;
  r.status = "completed";
  r.spec.l_train = 2;
  for (int l = 1; l <= 4; ++l) {
    LengthResult row;
    row.length = l;
    row.token = token;
    const double v = l <= 2 ? within : beyond;
    row.mse = v;
    row.token_accuracy = v;
    r.results.push_back(row);
  }
  return r;
}

FigureSpec make_spec(const std::string& metric) {
  FigureSpec s;
  s.name = "compare";
  s.metric = metric;
  s.plot = "length";
  s.baseline = "L0";
  return s;
}

// A figure of lines with these per-seed values beyond l_train.
struct Fixture {
  FigureSpec spec;
  std::vector<RunRecord> runs;
  FigureSummary summary;
  Fixture(const std::string& metric, const std::vector<std::vector<double>>& lines)
      : spec{make_spec(metric)} {
    runs.reserve(lines.size() * 3);
    summary.spec = &spec;
    for (size_t i = 0; i < lines.size(); ++i) {
      FigureLine line;
      line.label = fmt::format("L{}", i);
      for (size_t j = 0; j < lines[i].size(); ++j) {
        // Within l_train every run is the same: only the lengths beyond it may rank.
        runs.push_back(run(metric != "mse", 0.5, lines[i][j]));
        runs.back().spec.seed = j + 1;  // value j of every line is seed j + 1's run
        line.runs.push_back(&runs.back());
      }
      summary.lines.push_back(line);
    }
  }
};

}  // namespace

TEST_CASE("method comparison: ranks in the metric's direction, marks beyond the seed spread only") {
  // L1 lower than L0 with disjoint ranges; L2 lower on average but overlapping, and lower than
  // L0's run of the same seed in seeds 1 and 3 only; L3 higher, disjoint.
  const std::vector<std::vector<double>> v = {{10, 12, 14}, {1, 2, 3}, {5, 13, 11}, {20, 21, 22}};
  {
    const Fixture f("mse", v);  // lower is better
    const std::vector<ComparedLine> c = compare_lines(f.summary);
    REQUIRE(c.size() == 4);
    CHECK(c[0].mean == doctest::Approx(12));
    CHECK(c[0].min == 10);
    CHECK(c[0].max == 14);
    CHECK(c[1].rank == 1);
    CHECK(c[2].rank == 2);
    CHECK(c[0].rank == 3);
    CHECK(c[3].rank == 4);
    CHECK(c[0].versus_baseline == 0);
    CHECK(c[1].versus_baseline == 1);
    CHECK(c[2].versus_baseline == 0);  // 9.7 < 12, but 13 > 10: within the spread
    CHECK(c[3].versus_baseline == -1);
    // Seed by seed: L1 beats L0 in all three, L2 in two (13 > 12 in seed 2), L3 in none.
    CHECK(c[0].seeds_paired == 0);
    CHECK(c[1].seeds_better == 3);
    CHECK(c[1].seeds_paired == 3);
    CHECK(c[2].seeds_better == 2);
    CHECK(c[2].seeds_paired == 3);
    CHECK(c[3].seeds_better == 0);
    const std::string section = comparison_section({f.summary});
    CHECK(section.find("| L2 | 9.67 (2) ≈ 2/3 |") != std::string::npos);
    CHECK(section.find("The same sign in every seed: L1 (3/3), L3 (0/3). Sign changing between "
                       "seeds: L2 (2/3).") != std::string::npos);
  }
  {
    const Fixture f("token_accuracy", v);  // higher is better: everything flips
    const std::vector<ComparedLine> c = compare_lines(f.summary);
    CHECK(c[3].rank == 1);
    CHECK(c[1].rank == 4);
    CHECK(c[1].versus_baseline == -1);
    CHECK(c[3].versus_baseline == 1);
    const std::string section = comparison_section({f.summary});
    CHECK(section.find("## Method comparison") != std::string::npos);
    CHECK(section.find("| L3 | 21 (1) ▲ 3/3 |") != std::string::npos);
    CHECK(section.find("| L0 | 12 (2) baseline |") != std::string::npos);
    CHECK(
        section.find("best L3. Better than L0 beyond the seed spread: L3. Worse beyond it: L1.") !=
        std::string::npos);
  }
  {
    // The compare figure's bars: the factor over the baseline, > 1 better, whiskers over seeds.
    const Fixture mse("mse", v), acc("token_accuracy", v);
    const std::string dat = compare_dat({&mse.summary, &acc.summary});
    CHECK(dat.find(" 6 4 12 ") != std::string::npos);                      // mse: 12 ÷ {1,2,3}
    CHECK(dat.find(" 1.75 1.66666667 1.83333333 ") != std::string::npos);  // {20,21,22} ÷ 12
    CHECK(dat.find("\"L0\"") == std::string::npos);                        // no bar for itself
  }
  // No figure with a baseline: no section.
  Fixture none("mse", v);
  none.spec.baseline.clear();
  CHECK(comparison_section({none.summary}).empty());
}

TEST_CASE(
    "the comparison by test range: averages within each range, and the verdicts that change") {
  // l_train 2 and lengths 1..32: (1×, 4×] is 3..8, (4×, 8×] 9..16, (8×, 16×] 17..32. L1 beats the
  // baseline near (beyond the spread), ties it in the middle, loses far; L2 is better everywhere.
  const std::vector<double> near = {10, 11, 12}, mid = {20, 21, 22}, far = {30, 31, 32};
  const std::vector<std::vector<std::vector<double>>> lines = {
      {near, mid, far}, {{1, 2, 3}, {19, 23, 24}, {40, 41, 42}}, {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}};
  FigureSpec spec = make_spec("mse");
  std::vector<RunRecord> runs;
  runs.reserve(9);
  FigureSummary summary;
  summary.spec = &spec;
  for (size_t i = 0; i < lines.size(); ++i) {
    FigureLine line;
    line.label = fmt::format("L{}", i);
    for (size_t seed = 0; seed < 3; ++seed) {
      RunRecord r;
      r.status = "completed";
      r.spec.l_train = 2;
      r.spec.seed = seed + 1;
      for (int l = 1; l <= 32; ++l) {
        LengthResult row;
        row.length = l;
        row.mse = l <= 2 ? 0.5 : lines[i][l <= 8 ? 0 : l <= 16 ? 1 : 2][seed];
        r.results.push_back(row);
      }
      runs.push_back(r);
      line.runs.push_back(&runs.back());
    }
    summary.lines.push_back(line);
  }
  const std::vector<ComparedLine> far_lines = compare_lines(summary, {8, 16});
  CHECK(far_lines[0].mean == doctest::Approx(31));
  CHECK(far_lines[1].versus_baseline == -1);
  CHECK(compare_lines(summary, {1, 4})[1].versus_baseline == 1);
  CHECK(compare_lines(summary)[0].mean == doctest::Approx((11.0 * 6 + 21 * 8 + 31 * 16) / 30));
  CHECK(has_lengths_in(summary, {8, 16}));
  CHECK_FALSE(has_lengths_in(summary, {16, 32}));
  const std::string section = comparison_section({summary});
  CHECK(section.find("| method | (1×, 4×] l_train | (4×, 8×] l_train | (8×, 16×] l_train |") !=
        std::string::npos);
  CHECK(section.find("| L1 | 2 (1) ▲ 3/3 | 22 (3) ≈ 1/3 | 41 (3) ▼ 0/3 |") != std::string::npos);
  CHECK(section.find("Verdicts that change with the test range: L1 (▲ (1×, 4×] l_train, ≈ (4×, "
                     "8×] l_train, ▼ (8×, 16×] l_train; seeds better: 3/3, 1/3, 0/3).") !=
        std::string::npos);
  // A figure tested in one range only gets no range table.
  const Fixture near_only("mse", {{10, 12, 14}, {1, 2, 3}});
  CHECK(comparison_section({near_only.summary}).find("by test range") == std::string::npos);
}

TEST_CASE("a comparison whose baseline scores 0 has no bars: no figure, and the report says so") {
  // Exact match 0 beyond l_train for the baseline (a model trained too briefly): every factor
  // method ÷ baseline is infinite. gnuplot once stopped the whole run at such a figure.
  const Fixture f("token_accuracy", {{0, 0}, {0.2, 0.3}});
  const Fixture fine("token_accuracy", {{0.5, 0.5}, {0.2, 0.3}});
  CHECK_FALSE(has_compare_bars({&f.summary}));
  CHECK(has_compare_bars({&fine.summary}));
  CHECK(has_compare_bars({&f.summary, &fine.summary}));
  const std::string section = comparison_section({f.summary});
  CHECK(section.find("No figure: no method has a finite factor") != std::string::npos);
  CHECK(section.find("compare.png") == std::string::npos);
  CHECK(comparison_section({fine.summary}).find("![figure compare](compare.png)") !=
        std::string::npos);
  const auto dir = lenlab::test::fresh_dir("comparison", "no_bars");
  std::ofstream(dir / "compare.png") << "an old drawing";
  CHECK(render_compare_figure({&f.summary}, dir, PlotOptions{}));
  CHECK(std::filesystem::exists(dir / "compare.dat"));
  CHECK_FALSE(std::filesystem::exists(dir / "compare.gp"));
  CHECK_FALSE(std::filesystem::exists(dir / "compare.png"));
}

TEST_CASE("a baseline names one of the figure's lines, on a length plot") {
  const std::string head = R"(seeds = [1]
[defaults]
task = "length"
pe = "rope"
[figures.f]
vary = "settings"
values = [{ label = "nothing" }, { label = "OutRep", reparam = "sqrt" }]
)";
  CHECK(
      parse_experiment_config(head + "baseline = \"nothing\"\n", "c.toml").figures.at(0).baseline ==
      "nothing");
  const auto refused = [&](const std::string& rest, const std::string& says) {
    try {
      parse_experiment_config(head + rest, "c.toml");
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
    }
  };
  refused("baseline = \"none\"\n", "valid: 'nothing' or 'OutRep'");
  refused("baseline = 1\n", "'baseline' must name one of the figure's lines");
  refused("baseline = \"nothing\"\nplot = \"misalignment\"\n",
          "this figure has plot 'misalignment'");
}
