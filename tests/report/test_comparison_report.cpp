// report.md's method comparison (report/comparison_report.hpp): ranks by the metric beyond l_train
// in the metric's direction, verdicts from the paired test of the seeds (stats/paired_test.hpp)
// with Holm's adjustment, and the config's `baseline` checks.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "plots/gnuplot_compare.hpp"
#include "report/comparison_report.hpp"
#include "results/in_range_fit.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;

namespace {

// A run of l_train 2 (copy when `token`, else length) whose metric is `within` at lengths 1..2 and
// `beyond` at 3..4.
RunRecord run(bool token, double within, double beyond) {
  RunRecord r;
  r.status = "completed";
  r.spec.task = token ? "copy" : "length";
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
    size_t total = 0;
    for (const auto& l : lines) total += l.size();
    runs.reserve(total);  // the lines point into it
    summary.spec = &spec;
    for (size_t i = 0; i < lines.size(); ++i) {
      FigureLine line;
      line.label = fmt::format("L{}", i);
      for (size_t j = 0; j < lines[i].size(); ++j) {
        // Within l_train every run is the same, and fits its range (MSE 0, accuracy 1): only the
        // lengths beyond it may rank.
        runs.push_back(run(metric != "mse", metric == "mse" ? 0 : 1, lines[i][j]));
        runs.back().spec.seed = j + 1;  // value j of every line is seed j + 1's run
        line.runs.push_back(&runs.back());
      }
      summary.lines.push_back(line);
    }
  }
};

}  // namespace

TEST_CASE("method comparison: ranks in the metric's direction, verdicts from the paired seeds") {
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
    // The paired differences: L1 − L0 = −9, −10, −11; three seeds give an exact p of 0.25 at best.
    CHECK_FALSE(c[0].paired);
    REQUIRE(c[1].paired);
    CHECK(c[1].paired->mean_difference == doctest::Approx(-10));
    CHECK(c[1].paired->p_wilcoxon == doctest::Approx(0.25));
    CHECK(c[2].paired->wins == 2);
    // Seed by seed: L1 beats L0 in all three, L2 in two (13 > 12 in seed 2), L3 in none.
    CHECK(c[0].seeds_paired == 0);
    CHECK(c[1].seeds_better == 3);
    CHECK(c[1].seeds_paired == 3);
    CHECK(c[2].seeds_better == 2);
    CHECK(c[2].seeds_paired == 3);
    CHECK(c[3].seeds_better == 0);
    const std::string section = comparison_section({f.summary});
    // Three seeds: nothing is detectable, whatever the means; the table keeps k/n.
    CHECK(section.find("| L1 | 2 (1) 3/3 |") != std::string::npos);
    CHECK(section.find("| L2 | 9.67 (2) 2/3 |") != std::string::npos);
    CHECK(section.find("▲") == std::string::npos);
    CHECK(section.find("over all 3 comparisons") != std::string::npos);
    CHECK(section.find("  - L1: **no detectable difference**: difference -10 (95 % bootstrap "
                       "interval -11 to -9; median -10), better in 3/3 seeds, Wilcoxon "
                       "signed-rank p = 0.25, Holm-adjusted over 3 comparisons p = 0.75; 3 "
                       "seeds cannot reach an adjusted p below 0.05 (at best 0.75, every seed the "
                       "same way): more seeds are needed") != std::string::npos);
    // The setup and the test range in multiples of l_train (l_train 2, l_test 4 here).
    CHECK(section.find("l_train 2; lengths 3..4 = (1×, 2×] l_train;") != std::string::npos);
  }
  {
    const Fixture f("token_accuracy", v);  // higher is better: everything flips
    const std::vector<ComparedLine> c = compare_lines(f.summary);
    CHECK(c[3].rank == 1);
    CHECK(c[1].rank == 4);
    CHECK(c[1].seeds_better == 0);
    CHECK(c[3].seeds_better == 3);
    const std::string section = comparison_section({f.summary});
    CHECK(section.find("## Method comparison") != std::string::npos);
    CHECK(section.find("| L3 | 21 (1) 3/3 |") != std::string::npos);
    CHECK(section.find("| L0 | 12 (2) baseline |") != std::string::npos);
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
  // l_train 2 and lengths 1..32: (1×, 4×] is 3..8, (4×, 8×] 9..16, (8×, 16×] 17..32. Ten seeds.
  // L1 beats the baseline near in every seed, is mixed in the middle, loses far in every seed;
  // L2 is better everywhere.
  constexpr int kSeeds = 10;
  const auto value = [](size_t line, int range, int seed) {
    const double base = 10.0 * (range + 1) + seed;  // the baseline: 10+s, 20+s, 30+s
    if (line == 0) return base;
    if (line == 2) return base / 10;
    return range == 0   ? base / 10
           : range == 1 ? base + (seed % 2 ? 1 : -1) * (seed + 1)
                        : base + 10;
  };
  FigureSpec spec = make_spec("mse");
  std::vector<RunRecord> runs;
  runs.reserve(3 * kSeeds);
  FigureSummary summary;
  summary.spec = &spec;
  for (size_t i = 0; i < 3; ++i) {
    FigureLine line;
    line.label = fmt::format("L{}", i);
    for (int seed = 0; seed < kSeeds; ++seed) {
      RunRecord r;
      r.status = "completed";
      r.spec.l_train = 2;
      r.spec.l_test = 32;
      r.spec.seed = seed + 1;
      for (int l = 1; l <= 32; ++l) {
        LengthResult row;
        row.length = l;
        row.mse = l <= 2 ? 0 : value(i, l <= 8 ? 0 : l <= 16 ? 1 : 2, seed);
        r.results.push_back(row);
      }
      runs.push_back(r);
      line.runs.push_back(&runs.back());
    }
    summary.lines.push_back(line);
  }
  const std::vector<ComparedLine> far_lines = compare_lines(summary, {8, 16});
  CHECK(far_lines[0].mean == doctest::Approx(34.5));
  CHECK(far_lines[1].seeds_better == 0);
  CHECK(compare_lines(summary, {1, 4})[1].seeds_better == kSeeds);
  CHECK(has_lengths_in(summary, {8, 16}));
  CHECK_FALSE(has_lengths_in(summary, {16, 32}));
  const std::string section = comparison_section({summary});
  CHECK(section.find("| method | (1×, 4×] l_train | (4×, 8×] l_train | (8×, 16×] l_train |") !=
        std::string::npos);
  CHECK(section.find("| L1 | 1.45 (1) **helps** 10/10 | ") != std::string::npos);
  CHECK(section.find("**hurts** 0/10 |") != std::string::npos);
  CHECK(section.find("Verdicts that change with the test range: L1 (helps (1×, 4×] l_train, no "
                     "detectable difference (4×, 8×] l_train, hurts (8×, 16×] l_train).") !=
        std::string::npos);
  // One family: the main table's 2 comparisons and the 3 ranges' 6.
  CHECK(section.find("over all 8 comparisons") != std::string::npos);
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

TEST_CASE("two lines of the same runs are no detectable difference, 10 wide wins of 10 help") {
  const std::vector<double> base = {10, 12, 14, 11, 13, 12, 10, 15, 11, 12};
  std::vector<double> far_better;
  for (double x : base) far_better.push_back(x / 10);
  // L1 repeats L0's runs (the same settings under another label); L2 is a tenth of the error.
  const Fixture f("mse", {base, base, far_better});
  const std::vector<ComparedLine> c = compare_lines(f.summary);
  REQUIRE(c[1].paired);
  CHECK(c[1].paired->ties == 10);
  CHECK(c[1].paired->p_wilcoxon == 1);
  REQUIRE(c[2].paired);
  CHECK(c[2].paired->p_wilcoxon < 0.01);
  const std::string section = comparison_section({f.summary});
  CHECK(section.find("  - L1: **no detectable difference**") != std::string::npos);
  CHECK(section.find("the runs are identical seed by seed") != std::string::npos);
  CHECK(section.find("  - L2: **helps**") != std::string::npos);
  CHECK(section.find("| L2 | 1.2 (1) **helps** 10/10 |") != std::string::npos);
  // Higher is better: the same numbers make L2 hurt.
  const Fixture acc("token_accuracy", {base, base, far_better});
  CHECK(comparison_section({acc.summary}).find("  - L2: **hurts**") != std::string::npos);
}

TEST_CASE("the table's column names the baseline's task and encoding, not the first line's") {
  // A `vary = "pe"` figure: nope first, rope the baseline (configs/passkey_odds.toml's `pe`).
  Fixture f("token_accuracy", {{0.9, 0.8, 0.7}, {0.5, 0.4, 0.3}});
  f.spec.baseline = "L1";
  for (size_t i = 0; i < f.runs.size(); ++i) f.runs[i].spec.pe = i < 3 ? "nope" : "rope";
  const std::string section = comparison_section({f.summary});
  CHECK(section.find("| method | compare (copy, rope; ") != std::string::npos);
  CHECK(section.find("compare (copy, nope; ") == std::string::npos);
  CHECK(section.find("- **compare**: copy with rope") != std::string::npos);
}

TEST_CASE("lines trained at other lengths are averaged over the baseline's test lengths") {
  // Paper 004's C1: the baseline trains at l_train 2, L1 (the oracle) at 3. Each seed's pair must
  // compare the same lengths: 3..4, beyond the baseline's l_train, not L1's own 4 alone.
  Fixture f("mse", {{1, 1, 1}, {1, 1, 1}});
  for (size_t i = 3; i < 6; ++i) {
    f.runs[i].spec.l_train = 3;
    for (LengthResult& row : f.runs[i].results) row.mse = row.length <= 3 ? 0 : 2;
  }
  const std::vector<ComparedLine> c = compare_lines(f.summary);
  CHECK(c[1].mean == 1);  // (0 at 3 + 2 at 4) / 2, equal to the baseline's: a tie in every seed
  CHECK(c[1].seeds_not_fit.empty());  // its own range, 1..3, is what the gate reads
  REQUIRE(c[1].paired);
  CHECK(c[1].paired->ties == 3);
  CHECK(compare_lines(f.summary, {1, 1.5})[1].mean == 0);  // (2, 3]: length 3 only
  // Without a baseline run, each run counts in its own l_train.
  f.spec.baseline = "none";
  CHECK(compare_lines(f.summary)[1].mean == 2);
}

TEST_CASE("a line without a seed in common, or with an infinite average, is not judged") {
  Fixture f("mse", {{10, 12, 14}, {1, 2, 3}, {1, 2, 3}});
  f.runs[3].spec.seed = 7;  // L1's runs are seeds 7, 2, 3 … move them all away from L0's
  f.runs[4].spec.seed = 8;
  f.runs[5].spec.seed = 9;
  for (LengthResult& row : f.runs[8].results)  // beyond l_train only: it fits its range
    if (row.length > 2) row.mse = std::numeric_limits<double>::infinity();
  const std::string section = comparison_section({f.summary});
  CHECK(section.find("  - L1: **not judged** (no seed in common with the baseline).") !=
        std::string::npos);
  CHECK(section.find("  - L2: **not judged** (a seed's average is not finite).") !=
        std::string::npos);
}

TEST_CASE("the in-range gate: unfit runs enter no test, and an unfit baseline judges nothing") {
  // Length, l_train 2: the target's variance over lengths 1..2 is 0.25, so a run fits with an
  // in-range MSE of at most 0.0025.
  const std::vector<double> base = {10, 12, 14, 11, 13, 12, 10, 15, 11, 12};
  std::vector<double> far_better;
  for (double x : base) far_better.push_back(x / 10);
  Fixture f("mse", {base, far_better});
  // L1's seeds 2 and 5 missed their range (MSE 0.01 > 0.0025 inside 1..2).
  for (size_t run : {11, 14})
    for (LengthResult& row : f.runs[run].results)
      if (row.length <= 2) row.mse = 0.01;
  const std::vector<ComparedLine> c = compare_lines(f.summary);
  CHECK(c[1].seeds_not_fit == std::vector<uint64_t>{2, 5});
  REQUIRE(c[1].paired);
  CHECK(c[1].paired->n == 8);
  CHECK(c[1].n_seeds == 10);  // the mean still counts every run
  CHECK(c[1].in_range_rule == "MSE ≤ 0.0025 (1 % of the target's variance) inside 1..2");
  std::string section = comparison_section({f.summary});
  CHECK(section.find("| L1 | 1.2 (1) **helps** 8/8 (2 unfit) |") != std::string::npos);
  CHECK(section.find("better in 8/8 seeds (seeds 2, 5 left out: did not fit 1..l_train)") !=
        std::string::npos);
  CHECK(section.find("the baseline's runs that did not fit: none.") != std::string::npos);

  // The baseline misses its range in 6 of 10 seeds: nothing is judged.
  for (size_t run = 0; run < 6; ++run)
    for (LengthResult& row : f.runs[run].results)
      if (row.length <= 2) row.mse = 1;
  CHECK(compare_lines(f.summary)[1].baseline_unfit);
  section = comparison_section({f.summary});
  CHECK(section.find("  - L1: **not judged** (the baseline did not fit its own training range in "
                     "most seeds") != std::string::npos);
  CHECK(section.find("the baseline's runs that did not fit: seeds 1, 2, 3, 4, 5, 6.") !=
        std::string::npos);
}

TEST_CASE(
    "the in-range rules: accuracy for token tasks, excess cross-entropy for markov, none for "
    "text") {
  TrainSpec s;
  s.task = "copy";
  s.l_train = 40;
  InRangeRule r = in_range_rule(s);
  CHECK(r.metric == "token_accuracy");
  CHECK(r.at_least);
  CHECK(r.threshold == 0.99);
  s.task = "markov";
  r = in_range_rule(s);
  CHECK(r.metric == "excess_ce");
  CHECK_FALSE(r.at_least);
  s.task = "text";
  CHECK(in_range_rule(s).metric.empty());
  RunRecord text;
  text.spec = s;
  LengthResult row;
  row.length = 3;
  row.token = true;
  text.results.push_back(row);
  CHECK(in_range_fit(text).state == FitState::kUnchecked);
  CHECK(in_range_fit(text).enters());
  // A copy run at accuracy 0.98 inside its range does not fit; one with no row inside is unchecked.
  RunRecord copy = run(true, 0.98, 0.5);
  CHECK(in_range_fit(copy).state == FitState::kDoesNotFit);
  CHECK(in_range_fit(copy).value == doctest::Approx(0.98));
  copy.results.erase(copy.results.begin(), copy.results.begin() + 2);
  CHECK(in_range_fit(copy).state == FitState::kUnchecked);
}

TEST_CASE("method comparison: the share of test pairs in untrained buckets, line by line") {
  Fixture f("mse", {{10, 12}, {1, 2}, {5, 6}});
  // L0's seeds read untrained buckets in 0.5 and 0.3 of their pairs past l_train (lengths 3, 4:
  // 0.4 and 0.6, then 0.2 and 0.4); L1 maps them away (0); L2's runs do not count them.
  const std::vector<std::vector<double>> share = {{0, 0, 0.4, 0.6}, {0, 0, 0.2, 0.4}};
  for (size_t s = 0; s < 2; ++s)
    for (size_t l = 0; l < 4; ++l) {
      f.runs[s].results[l].untrained_pairs = share[s][l];
      f.runs[2 + s].results[l].untrained_pairs = 0;
    }
  const std::string section = comparison_section({f.summary});
  CHECK(section.find("  - untrained bias: the share of the (answer row, key) pairs attended past "
                     "l_train whose distance reads a bucket no training step reached") !=
        std::string::npos);
  CHECK(section.find(": L0 0.4 (2 seeds, 0.3 to 0.5); L1 0 (2 seeds, 0 to 0).\n") !=
        std::string::npos);
  // Without a count in any run, no such line.
  const Fixture plain("mse", {{10, 12}, {1, 2}});
  CHECK(comparison_section({plain.summary}).find("untrained bias") == std::string::npos);
}
