// --until-fit and --validate (train/until_fit.hpp): the stop rule's decisions on planted scores,
// its validation sequences apart from the test's, its settings' checks; runs that stop are in
// tests/lab/test_until_fit_runs.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tasks/task.hpp"
#include "tests/support/test_support.hpp"
#include "train/run_settings.hpp"
#include "train/until_fit.hpp"

using namespace lenlab;
using namespace lenlab::test;
using Json = nlohmann::json;

namespace {

UntilFitSettings rule(int patience) {
  UntilFitSettings s;
  s.on = 1;
  s.patience = patience;
  return s;
}

// Feeds the scores, one check every 100 steps; returns the step it stopped after (0: never).
int stop_step(FitWatch& watch, const std::vector<double>& scores) {
  for (size_t i = 0; i < scores.size(); ++i)
    if (watch.observe(static_cast<int>(100 * (i + 1)), scores[i]))
      return static_cast<int>(100 * (i + 1));
  return 0;
}

}  // namespace

TEST_CASE(
    "the stop rule stops at the first fitting score, or after `patience` checks without a "
    "better one") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SUBCASE("an accuracy that reaches the threshold stops there, exactly at it included") {
    FitWatch w(rule(10), 0.99, /*at_least=*/true);
    CHECK(stop_step(w, {0.5, 0.8, 0.99, 1.0}) == 300);
    CHECK(w.reason() == "fit");
    CHECK(w.checks().size() == 3);
  }
  SUBCASE("an error must fall to the threshold") {
    FitWatch w(rule(10), 0.01, /*at_least=*/false);
    CHECK(stop_step(w, {0.5, 0.02, 0.0100001, 0.01}) == 400);
    CHECK(w.reason() == "fit");
  }
  SUBCASE("stalled: patience checks in a row no better than the best so far") {
    FitWatch w(rule(3), 0.99, true);
    // best 0.7 at check 2; 0.6, 0.7 (equal is not better), 0.65: three without a better score
    CHECK(stop_step(w, {0.5, 0.7, 0.6, 0.7, 0.65, 0.9}) == 500);
    CHECK(w.reason() == "stalled");
  }
  SUBCASE("a better score starts the count again") {
    FitWatch w(rule(2), 0.99, true);
    CHECK(stop_step(w, {0.5, 0.4, 0.6, 0.5, 0.7, 0.6, 0.5}) == 700);
  }
  SUBCASE("patience 0 never stalls: the run goes to --steps") {
    FitWatch w(rule(0), 0.99, true);
    CHECK(stop_step(w, std::vector<double>(50, 0.5)) == 0);
    CHECK(w.reason().empty());
    CHECK(w.to_json("r", 6000)["reason"] == "steps");
    CHECK(w.to_json("r", 6000)["stopped_step"] == 0);
  }
  SUBCASE("a score that is not a number never fits and never improves; JSON writes it as null") {
    FitWatch w(rule(2), 0.01, false);
    CHECK(stop_step(w, {nan, 0.5, nan, nan}) == 400);
    CHECK(w.reason() == "stalled");
    const auto j = w.to_json("rule text", 400);
    CHECK(j["check_values"][0].is_null());
    CHECK(j["check_values"][1] == 0.5);
    CHECK(j["check_steps"] == Json::array({100, 200, 300, 400}));
    CHECK(j["stopped_step"] == 400);
    CHECK(j["rule"] == "rule text");
  }
}

TEST_CASE("the validation sequences are not the test sequences") {
  const uint64_t seed = TrainSpec{}.eval_seed;
  CHECK(validation_seed(seed) != seed);
  CHECK(validation_seed(seed) != validation_seed(seed + 1));
  // At a length with more sequences than samples, the two sets differ.
  const Batch test = eval_batch(TaskKind::kSum, 30, 64, seed);
  const Batch validation = eval_batch(TaskKind::kSum, 30, 64, validation_seed(seed));
  CHECK(test.tokens != validation.tokens);
}

TEST_CASE("--until-fit's settings are checked, one message each") {
  const auto refused = [](UntilFitSettings s, TaskKind task = TaskKind::kParity) {
    return usage_message([&] { check_until_fit(s, 0, task); });
  };
  UntilFitSettings s = rule(10);
  s.every = 0;
  CHECK(contains(refused(s), "--fit-every (fit_every) must be >= 1"));
  s = rule(-1);
  CHECK(contains(refused(s), "--fit-patience (fit_patience) must be >= 0"));
  s = rule(10);
  s.samples = 0;
  CHECK(contains(refused(s), "--fit-samples (fit_samples) must be >= 1"));
  s = UntilFitSettings{};
  s.patience = 3;
  CHECK(contains(refused(s), "give --until-fit"));
  s = UntilFitSettings{};
  s.every = 100;
  CHECK(contains(refused(s), "give --until-fit"));
  CHECK(contains(refused(rule(10), TaskKind::kText), "task 'text' has no in-range rule"));
  CHECK_NOTHROW(check_until_fit(rule(10), 0, TaskKind::kParity));
  CHECK_NOTHROW(check_until_fit(UntilFitSettings{}, 0, TaskKind::kText));
  s = UntilFitSettings{};
  s.samples = 16;  // the validation sequences of --validate alone
  CHECK_NOTHROW(check_until_fit(s, 1, TaskKind::kParity));
  CHECK(contains(usage_message([&] { check_until_fit(s, 0, TaskKind::kParity); }),
                 "--fit-samples sets the validation sequences"));
  CHECK(contains(usage_message([&] { check_until_fit(UntilFitSettings{}, 1, TaskKind::kText); }),
                 "--validate: task 'text' has no in-range rule"));
}

TEST_CASE("a switch may be written true or false in a config or from Python, other integers not") {
  TrainSpec s =
      spec_from_json(Json::parse(R"({"until_fit": true, "validate": true})"), TrainSpec{}, "test");
  CHECK(s.until_fit.on == 1);
  CHECK(s.validate == 1);
  s = spec_from_json(Json::parse(R"({"until_fit": false})"), s, "test");
  CHECK(s.until_fit.on == 0);
  CHECK(contains(usage_message([] {
                   spec_from_json(Json::parse(R"({"fit_every": true})"), TrainSpec{}, "test");
                 }),
                 "'fit_every' must be"));
}
