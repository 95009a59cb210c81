#pragma once
// What the misalignment figure's tests share: configs, refusals, fake runs
// (tests/plots/test_misalignment_figure*.cpp).
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
#include "tests/support/cli_support.hpp"

namespace lenlab::test {

// Tiny length-prediction runs: 30 steps of a one-layer d = 8 model, tested at lengths 1..6.
inline constexpr const char* kTinyDefaults = R"(seeds = [1, 2]
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
inline void refused(const std::string& text, const std::string& figure,
                    const std::string& message) {
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
inline RunRecord fake_run(const PlannedRun& p, std::optional<double> value) {
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
inline std::map<std::string, RunRecord> fake_runs(const ExperimentConfig& c,
                                                  const std::string& figure) {
  std::map<std::string, RunRecord> runs;
  double value = 1;
  for (const PlannedRun& p : plan_runs(c, {figure}, c.seeds)) runs[p.id] = fake_run(p, value++);
  return runs;
}

}  // namespace lenlab::test
