#pragma once
// The tiny experiment the experiment, sweep and dry-run suites share (test_experiment.cpp,
// test_sweep.cpp, test_dry_run.cpp): two figures that share one line, 3 distinct runs per seed.
#include <filesystem>
#include <string>

#include "lab/experiment/experiment.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab::test {

// An empty folder for one test, below LENLAB_TEST_TMP/experiment.
inline std::filesystem::path experiment_dir(const std::string& name) {
  return fresh_dir("experiment", name);
}

// The tiny model every experiment test trains (TOML lines of a config's [defaults]): one layer,
// d_model 16, so that a run takes a second or less.
inline const std::string kTinyModelToml = R"(warmup_steps = 5
d_model = 16
n_head = 2
d_ff = 32
n_layer = 1
eval_samples = 16
)";

// Two tiny figures that share one line (length / nope / identity): 3 distinct runs per seed.
inline const std::string kTinyConfig = R"(
seeds = [1, 2]
[defaults]
task = "length"
l_train = 3
l_test = 6
steps = 150
)" + kTinyModelToml + R"([figures.p]
title = "length × pe"
vary = "pe"
values = ["nope", "alibi"]
[figures.r]
title = "length × reparam"
vary = "reparam"
values = ["identity", "sqrt"]
)";

inline ExperimentOptions tiny_options(const std::filesystem::path& out) {
  ExperimentOptions o;
  o.out = out;
  o.config_text = kTinyConfig;
  o.config_source = "tiny.toml";
  o.jobs = 2;
  // CPU workers, whatever the machine has: these tests count workers and read the CPU's
  // prediction (a GPU trains the six runs as one group; tests/cuda checks groups).
  o.device = "cpu";
  o.plot.gnuplot = "/nonexistent/gnuplot";  // figures' data only: rendering is tested elsewhere
  return o;
}

}  // namespace lenlab::test
