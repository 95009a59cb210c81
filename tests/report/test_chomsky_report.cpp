// report.md's Chomsky-hierarchy suite and chomsky_scores.csv, from hand-made RunRecords (no
// training): each run's score over the lengths past l_train, the maximum and mean ± standard
// deviation over seeds, the tasks grouped by level, and which figures take part.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"
#include "plots/figure_data.hpp"
#include "report/chomsky_report.hpp"
#include "results/figure_setup.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
using lenlab::test::contains;

namespace {

// Token accuracy 1 at lengths 1..l_train (4) — 0.9 for seed 3, a run that did not fit its range —
// and 0.5 + 0.1·seed past it, lengths 1..7.
std::vector<LengthResult> rows_of(uint64_t seed) {
  std::vector<LengthResult> rows;
  for (int length = 1; length <= 7; ++length) {
    LengthResult r;
    r.token = true;
    r.length = length;
    r.token_accuracy =
        length <= 4 ? (seed == 3 ? 0.9 : 1.0) : 0.5 + 0.1 * static_cast<double>(seed);
    r.n_sequences = 8;
    r.n_answer_tokens = 8;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("the Chomsky-hierarchy suite: scores past l_train, max and mean ± sd over seeds") {
  const ExperimentConfig config = parse_experiment_config(
      "seeds = [1, 2, 3]\n[defaults]\nl_train = 4\nl_test = 7\n"
      "[figures.sqrt]\ntitle = \"S\"\ntask = \"compute-sqrt\"\nvary = \"pe\"\nvalues = [\"nope\"]\n"
      "[figures.par]\ntitle = \"P\"\ntask = \"parity\"\nvary = \"pe\"\n"
      "values = [\"nope\", \"rope\"]\n"
      "[figures.m]\ntitle = \"M\"\ntask = \"mean\"\nvary = \"pe\"\nvalues = [\"nope\"]\n",
      "suite.toml");
  const std::vector<uint64_t> seeds = {1, 2, 3};
  std::map<std::string, RunRecord> runs;
  for (const FigureSpec& figure : config.figures)
    for (size_t line = 0; line < figure.values.size(); ++line)
      for (const uint64_t seed : seeds) {
        if (figure.name == "par" && line == 1 && seed == 3) continue;  // rope: two seeds
        RunRecord r;
        r.spec = figure.line_spec(line, seed);
        r.id = run_id(r.spec);
        r.status = "completed";
        r.results = rows_of(seed);
        if (figure.name == "m")
          for (LengthResult& row : r.results) row.token = false;  // a scalar run: its MSE
        runs[r.id] = r;
      }
  std::vector<FigureSummary> figures;  // in this order whatever the config's
  for (const char* name : {"sqrt", "par", "m"})
    figures.push_back(summarize_figure(*config.find(name), seeds, runs));
  CHECK(is_suite_figure(figures[0]));
  CHECK(is_suite_figure(figures[1]));
  CHECK_FALSE(is_suite_figure(figures[2]));  // the mean task, its MSE

  // Seeds 1, 2, 3 score 0.6, 0.7, 0.8: max 0.8, mean 0.7, sd 0.1; rope's two 0.6, 0.7.
  const SuiteCell nope = suite_cell(figures[1].lines[0]);
  CHECK(nope.n_seeds == 3);
  CHECK(nope.max == doctest::Approx(0.8));
  CHECK(nope.mean == doctest::Approx(0.7));
  CHECK(nope.sd == doctest::Approx(0.1));
  CHECK(nope.n_fit == 2);
  CHECK(nope.fit_mean == doctest::Approx(0.65));  // seeds 1 and 2: seed 3 missed its range
  const SuiteCell rope = suite_cell(figures[1].lines[1]);
  CHECK(rope.n_seeds == 2);
  CHECK(rope.sd == doctest::Approx(std::sqrt(0.005)));

  const std::string section = chomsky_suite_section(figures);
  CAPTURE(section);
  CHECK(contains(section, "## Chomsky-hierarchy suite"));
  CHECK(contains(section, "| level | task | figure | lengths scored | nope | rope |\n"));
  // Regular before context-sensitive, whatever the config's order.
  const size_t parity = section.find(
      "| regular | parity | par | 5..7 (3) | **0.800** · 0.700 ± 0.100 (3, 2 fit: 0.650) | "
      "**0.700** · 0.650 ± 0.071 (2, 2 fit) |\n");
  const size_t sqrt = section.find(
      "| context-sensitive | compute-sqrt | sqrt | 5..7 (3) | **0.800** · 0.700 ± 0.100 (3, 2 fit: "
      "0.650) | |\n");
  REQUIRE(parity != std::string::npos);
  REQUIRE(sqrt != std::string::npos);
  CHECK(parity < sqrt);
  CHECK(contains(section,
                 "| all | mean over tasks | | | **0.800** · 0.700 (2 tasks) | **0.700** · 0.650 "
                 "(1 task) |\n"));
  CHECK_FALSE(contains(section, "| mean |"));

  const std::string csv = chomsky_scores_csv(figures);
  CHECK(csv.rfind("figure,task,level,line,seed,run_id,score,first_length,last_length,n_lengths,"
                  "in_range_accuracy,fits_range,scored_on,told_score\n",
                  0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 + 3 + 2);
  const RunRecord& rope2 = runs.at(run_id(config.find("par")->line_spec(1, 2)));
  CHECK(contains(csv, "par,parity,regular,rope,2," + rope2.id + ",0.7,5,7,3,1,1,told,0.7\n"));
  // Seed 3 missed its range (accuracy 0.9 inside 1..4 on its nope parity run): 2 of 3 fit.
  const RunRecord& nope3 = runs.at(run_id(config.find("par")->line_spec(0, 3)));
  CHECK(contains(csv, "par,parity,regular,nope,3," + nope3.id + ",0.8,5,7,3,0.9,0,told,0.8\n"));

  // No suite figure: no section, no file. A run with no length past l_train scores NaN, written
  // as an empty cell.
  CHECK(chomsky_suite_section({figures[2]}).empty());
  CHECK(chomsky_scores_csv({figures[2]}).empty());
  RunRecord short_run = rope2;
  short_run.results.resize(4);
  CHECK(std::isnan(suite_score(short_run)));
  FigureSummary alone = figures[1];
  alone.lines.resize(1);
  alone.lines[0].runs = {&short_run};
  CHECK(contains(chomsky_scores_csv({alone}), ",,0,0,0,1,1,told,\n"));
  CHECK(contains(chomsky_suite_section({alone}), "| none | — |"));
}

TEST_CASE("the Chomsky-hierarchy suite scores what the model writes when its runs decoded") {
  const ExperimentConfig config = parse_experiment_config(
      "seeds = [1, 2]\n[defaults]\nl_train = 4\nl_test = 7\n"
      "[figures.rev]\ntitle = \"R\"\ntask = \"reverse\"\nvary = \"pe\"\n"
      "values = [\"nope\", \"rope\"]\n",
      "suite.toml");
  const std::vector<uint64_t> seeds = {1, 2};
  std::map<std::string, RunRecord> runs;
  const FigureSpec& figure = config.figures.at(0);
  for (size_t line = 0; line < 2; ++line)
    for (const uint64_t seed : seeds) {
      RunRecord r;
      r.spec = figure.line_spec(line, seed);
      r.id = run_id(r.spec);
      r.status = "completed";
      r.results = rows_of(seed);
      // nope decoded greedily at every length, writing 0.2 less past l_train than it was told;
      // rope's seed 2 not decoded at length 7: that line stays teacher-forced.
      for (LengthResult& row : r.results)
        if (line == 0 || seed == 1 || row.length < 7)
          row.generated_token_accuracy = row.token_accuracy - (row.length > 4 ? 0.2 : 0.0);
      runs[r.id] = r;
    }
  const std::vector<FigureSummary> figures = {summarize_figure(figure, seeds, runs)};
  const RunRecord& nope1 = runs.at(run_id(figure.line_spec(0, 1)));
  const SuiteScore s = suite_scores(nope1);
  CHECK(s.decoded());
  CHECK(s.told == doctest::Approx(0.6));
  CHECK(s.written == doctest::Approx(0.4));
  CHECK(suite_score(nope1) == doctest::Approx(0.4));
  const SuiteCell nope = suite_cell(figures[0].lines[0]);
  CHECK(nope.written);
  CHECK(nope.max == doctest::Approx(0.5));
  CHECK(nope.told_max == doctest::Approx(0.7));
  const SuiteCell rope = suite_cell(figures[0].lines[1]);
  CHECK_FALSE(rope.written);  // one run not decoded everywhere: the line is told, not mixed
  CHECK(rope.max == doctest::Approx(0.7));
  const std::string section = chomsky_suite_section(figures);
  CAPTURE(section);
  CHECK(contains(section,
                 "| deterministic context-free | reverse | rev | 5..7 (3) | **0.500** · 0.450 ± "
                 "0.071 (2, 2 fit) · told **0.700** · 0.650 | **0.700** · 0.650 ± 0.071 (2, 2 "
                 "fit) |\n"));
  const std::string csv = chomsky_scores_csv(figures);
  CHECK(contains(csv, "rev,reverse,deterministic context-free,nope,1," + nope1.id +
                          ",0.4,5,7,3,1,1,written,0.6\n"));
}
