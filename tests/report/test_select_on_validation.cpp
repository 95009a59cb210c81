// A config's [select] grid (results/figure_setup.hpp, results/validation_choice.hpp): its parsing
// and refusals, the runs it plans, and the choice per line and seed, from hand-made RunRecords:
// the run with the best validation score is kept even where another combination scores better on
// the test lengths, diverged and unscored runs are never chosen, and a choice waits for every
// combination; report.md says what was tried and kept.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "plots/figure_data.hpp"
#include "report/selection_report.hpp"
#include "results/figure_setup.hpp"
#include "results/validation_choice.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
using lenlab::test::contains;
using lenlab::test::usage_message;

namespace {

const char* kGridConfig =
    "seeds = [1, 2]\n[defaults]\ntask = \"parity\"\nl_train = 4\nl_test = 7\nlr = 1e-3\n"
    "[select]\nby = \"validation\"\nlr = [1e-4, 3e-4, 5e-4]\nwarmup_steps = [0, 100]\n"
    "[figures.par]\ntitle = \"P\"\nvary = \"pe\"\nvalues = [\"nope\", \"rope\"]\n";

// Token accuracy `in_range` at lengths 1..4 and `beyond` at 5..7.
std::vector<LengthResult> rows(double in_range, double beyond) {
  std::vector<LengthResult> out;
  for (int length = 1; length <= 7; ++length) {
    LengthResult r;
    r.token = true;
    r.length = length;
    r.token_accuracy = length <= 4 ? in_range : beyond;
    r.n_sequences = 8;
    r.n_answer_tokens = 8;
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("[select] plans every combination for every line and seed, each with --validate") {
  const ExperimentConfig config = parse_experiment_config(kGridConfig, "grid.toml");
  const FigureSpec& fig = *config.find("par");
  REQUIRE(fig.grid.size() == 6);
  const std::vector<TrainSpec> tried = fig.line_candidates(1, 2);
  REQUIRE(tried.size() == 6);
  // lr slowest, warmup fastest; the grid's lr replaces [defaults]' 1e-3.
  CHECK(tried[0].optimizer.lr == 1e-4);
  CHECK(tried[0].optimizer.warmup_steps == 0);
  CHECK(tried[1].optimizer.warmup_steps == 100);
  CHECK(tried[5].optimizer.lr == 5e-4);
  for (const TrainSpec& s : tried) {
    CHECK(s.validate == 1);
    CHECK(s.pe == "rope");
    CHECK(s.seed == 2);
  }
  CHECK(plan_runs(config, {}, config.seeds).size() == 2 * 2 * 6);
  // Without a grid: the line alone, validate left off (its id unchanged).
  const ExperimentConfig plain = parse_experiment_config(
      "seeds = [1]\n[figures.par]\ntitle = \"P\"\ntask = \"parity\"\nvary = \"pe\"\n"
      "values = [\"nope\"]\n",
      "plain.toml");
  const std::vector<TrainSpec> one = plain.figures[0].line_candidates(0, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0].validate == 0);
  CHECK(run_id(one[0]) == run_id(plain.figures[0].line_spec(0, 1)));
}

TEST_CASE("[select] refuses what it cannot choose by, naming the key") {
  const auto refused = [](const std::string& select, const std::string& figure_extra = "") {
    return usage_message([&] {
      parse_experiment_config("seeds = [1]\n[defaults]\ntask = \"parity\"\n" + select +
                                  "[figures.par]\ntitle = \"P\"\nvary = \"pe\"\n"
                                  "values = [\"nope\"]\n" +
                                  figure_extra,
                              "bad.toml");
    });
  };
  CHECK(contains(refused("[select]\nlr = [1e-4]\n"), "needs by = \"validation\""));
  CHECK(contains(refused("[select]\nby = \"test\"\nlr = [1e-4]\n"), "needs by = \"validation\""));
  CHECK(contains(refused("[select]\nby = \"validation\"\n"), "lists no setting to try"));
  CHECK(contains(refused("[select]\nby = \"validation\"\npe = [\"rope\"]\n"),
                 "[select] cannot try 'pe'"));
  CHECK(contains(refused("[select]\nby = \"validation\"\nlr = 1e-4\n"),
                 "lr must be a non-empty list"));
  CHECK(contains(refused("[select]\nby = \"validation\"\nlr = []\n"), "non-empty list"));
  CHECK(contains(refused("[select]\nby = \"validation\"\nlr = [\"fast\"]\n"), "lr"));
  CHECK(contains(refused("[select]\nby = \"validation\"\nlr = [1e-4]\n", "lr = 3e-4\n"),
                 "'lr' is tried by [select] for every run"));
}

TEST_CASE("[select] keeps the best validation score, never the best test score") {
  const ExperimentConfig config = parse_experiment_config(kGridConfig, "grid.toml");
  const FigureSpec& fig = *config.find("par");
  std::map<std::string, RunRecord> runs;
  // For every line and seed: combination 2 has the best validation score (0.95) and a poor test
  // score past l_train (0.5); combination 4 the best test score (0.99) and a worse validation
  // score (0.9); the others lower on both. Seed 2 of rope: combination 2 diverged.
  for (size_t line = 0; line < 2; ++line)
    for (const uint64_t seed : {1, 2}) {
      const std::vector<TrainSpec> tried = fig.line_candidates(line, seed);
      for (size_t c = 0; c < tried.size(); ++c) {
        RunRecord r;
        r.spec = tried[c];
        r.id = run_id(r.spec);
        r.status = "completed";
        r.validation = c == 2 ? 0.95 : c == 4 ? 0.9 : 0.5;
        r.results = rows(*r.validation, c == 2 ? 0.5 : c == 4 ? 0.99 : 0.4);
        if (c == 2) {  // stopped by --until-fit
          r.stop_reason = "fit";
          r.steps_trained = 1750;
        }
        if (line == 1 && seed == 2 && c == 2) r.status = "diverged";
        runs[r.id] = r;
      }
    }
  const FigureSummary summary = summarize_figure(fig, config.seeds, runs);
  CHECK(summary.missing_runs == 0);
  const FigureLine& nope = summary.lines[0];
  REQUIRE(nope.runs.size() == 2);
  REQUIRE(nope.choices.size() == 2);
  for (const GridChoice& c : nope.choices) {
    CHECK(c.tried.size() == 6);
    CHECK(c.chosen->spec.optimizer.lr == 3e-4);  // combination 2: lr 3e-4, warm-up 0
    CHECK(c.chosen->spec.optimizer.warmup_steps == 0);
  }
  CHECK(nope.value_mean.back() == doctest::Approx(0.5));  // its test score, not 0.99
  // A diverged combination is tried but never kept: seed 2 of rope keeps combination 4.
  const FigureLine& rope = summary.lines[1];
  REQUIRE(rope.choices.size() == 2);
  CHECK(rope.choices[1].tried.size() == 5);
  CHECK(rope.choices[1].chosen->spec.optimizer.lr == 5e-4);
  CHECK(rope.choices[1].chosen->spec.optimizer.warmup_steps == 0);

  const std::string section = selection_section(summary);
  CHECK(contains(section, "| nope | 1 | lr 0.0003, warmup_steps 0 | 0.95 | 1750 (fit) |"));
  CHECK(contains(section, "token accuracy ≥ 0.99 inside 1..4"));
  CHECK(contains(section, "lr 0.0005, warmup_steps 0: 0.9"));
  CHECK(contains(section, "| rope | 2 | lr 0.0005, warmup_steps 0 | 0.9 | all |"));

  // A combination not run yet: that line and seed is missing, not chosen among the rest.
  runs.erase(run_id(fig.line_candidates(0, 1)[5]));
  const FigureSummary partial = summarize_figure(fig, config.seeds, runs);
  CHECK(partial.missing_runs == 1);
  CHECK(partial.lines[0].runs.size() == 1);
}

TEST_CASE(
    "choose_on_validation: the direction of the task's rule, ties to the first, unscored "
    "runs never") {
  RunRecord a, b, c;
  for (RunRecord* r : {&a, &b, &c}) {
    r->status = "completed";
    r->spec.task = "mean";  // an error: smaller is better
  }
  a.validation = 0.02;
  b.validation = 0.01;
  c.validation = 0.01;
  CHECK(choose_on_validation({&a, &b, &c}) == &b);
  b.validation.reset();
  CHECK(choose_on_validation({&a, &b, &c}) == &c);
  c.status = "diverged";
  CHECK(choose_on_validation({&a, &b, &c}) == &a);
  a.validation.reset();
  CHECK(choose_on_validation({&a, &b, &c}) == nullptr);
  CHECK(choose_on_validation({}) == nullptr);
}
