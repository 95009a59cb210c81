// A group's time on a device that trains runs together (cost/group_time_model.hpp), the GPU dry
// run's report from measured rates (cost/dry_run.hpp), the groups the GPU sweep forms
// (lab/run/run_group.hpp), and the rates measured on the CPU backend (lab/run/group_speed.hpp:
// the same code the GPU runs).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "cost/dry_run.hpp"
#include "cost/group_time_model.hpp"
#include "lab/run/device.hpp"
#include "lab/run/run_group.hpp"
#include "tasks/token_tasks.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

namespace {

// A reverse run decoded greedily at lengths 4 and 8, its stop rule checking every 25 of 100 steps.
TrainSpec reverse_run() {
  TrainSpec s;
  s.task = "reverse";
  s.token.n_symbols = 2;
  s.l_train = 8;
  s.lengths = "4,8";
  s.l_test = 8;
  s.steps = 100;
  s.eval_samples = 4;
  s.until_fit.on = 1;
  s.until_fit.every = 25;
  s.test_attention.decode = "greedy";
  return s;
}

constexpr double kFree = 1e30;  // a rate at which this work takes no time (to 1e-12 s)

}  // namespace

TEST_CASE("a group's time: fixed costs per step, test length and decoded row, paid once a group") {
  const CostedRun r(reverse_run());
  const LengthRange range = r.resolved.train_lengths;
  REQUIRE(range.hi == 8);
  const double rows = static_cast<double>(tokens_per_sequence(r.resolved.task, r.spec.token, 4) +
                                          tokens_per_sequence(r.resolved.task, r.spec.token, 8));
  CHECK(decoded_rows(r, 4) + decoded_rows(r, 8) == rows);
  // Fixed costs alone: 100 steps; 4 checks of every training length; 2 test lengths and their rows.
  const GroupSpeed fixed{1e-3, kFree, 2e-3, 1e-4, kFree};
  const GroupSeconds one = predicted_group_seconds({&r}, fixed);
  CHECK(one.train == doctest::Approx(100 * 1e-3 + 4 * (range.hi - range.lo + 1) * 2e-3));
  CHECK(one.eval == doctest::Approx(2 * 2e-3 + rows * 1e-4));
  // A second run in the group steps and evaluates with the first: the fixed costs stay, its work
  // adds at the rates.
  const GroupSpeed speed{1e-3, 1e12, 2e-3, 1e-4, 5e11};
  TrainSpec other_seed = reverse_run();
  other_seed.seed = 2;
  const CostedRun r2(other_seed);
  const GroupSeconds a = predicted_group_seconds({&r}, speed),
                     b = predicted_group_seconds({&r, &r2}, speed);
  CHECK(b.train - a.train ==
        doctest::Approx(100 * r.cost.train_step_flops / 1e12 + r.cost.fit_check_flops / 5e11));
  CHECK(b.eval - a.eval == doctest::Approx(r.cost.eval_flops / 5e11));
  // A run that differs only in test-time attention shares the first one's training.
  TrainSpec hotter = reverse_run();
  hotter.test_attention.temperature = "2";
  const CostedRun c(hotter);
  const GroupSeconds shared = predicted_group_seconds({&r, &c}, speed);
  REQUIRE(training_spec_text(c.spec) == training_spec_text(r.spec));
  CHECK(shared.train == doctest::Approx(a.train));
  CHECK(shared.eval - a.eval == doctest::Approx(c.cost.eval_flops / 5e11));
  CHECK(b.train - one.train > 0);
  // Without greedy decoding nothing is decoded; a scalar task never decodes.
  TrainSpec told = reverse_run();
  told.test_attention.decode = "teacher-forced";
  CHECK(decoded_rows(CostedRun(told), 8) == 0);
  CHECK(decoded_rows(CostedRun(TrainSpec{}), 8) == 0);
  CHECK(usable(speed));
  for (const GroupSpeed bad : {GroupSpeed{-1, 1, 0, 0, 1}, GroupSpeed{0, 0, 0, 0, 1},
                               GroupSpeed{0, 1, NAN, 0, 1}, GroupSpeed{0, 1, 0, 0, INFINITY}})
    CHECK_FALSE(usable(bad));
  CHECK(describe(speed) ==
        "a step 1.00 ms + its work at 1000 GFLOP/s; a test length 2.00 ms, a decoded row 0.100 ms "
        "+ its work at 500 GFLOP/s");
}

TEST_CASE("the GPU's dry run from measured rates: one line per kind of group, groups on streams") {
  DryRunInput in;
  in.config_source = "groups.toml";
  TrainSpec second = reverse_run();
  second.seed = 2;
  in.todo = {reverse_run(), second, TrainSpec{}};
  in.n_planned = 3;
  in.gpu = true;
  in.jobs = 2;
  in.groups = {{0, 1}, {2}};
  in.device_label = "cuda:0 (a test GPU)";
  const GroupSpeed speed{1e-3, kFree, 2e-3, 0, kFree};
  in.group_speeds[speed_shape(in.todo[0].spec)] = speed;
  const std::string report = dry_run_report(in);
  INFO(report);
  CHECK(report.find("on cuda:0 (a test GPU), measured just now for d 64/256 layers 2 heads 4 "
                    "batch 64: a step 1.00 ms") != std::string::npos);
  // The reverse pair: 100 steps and 4 checks of 8 lengths (0.164 s); the length run: 2000 steps.
  const double pair = predicted_group_seconds({&in.todo[0], &in.todo[1]}, speed).train;
  CHECK(pair == doctest::Approx(0.164));
  CHECK(report.find("       1     2      0.2s      0.0s  reverse l_train 8") != std::string::npos);
  const GroupSeconds single = predicted_group_seconds({&in.todo[2]}, speed);
  // On two streams the two groups overlap: the wall is the longer one's.
  CHECK(report.find(fmt::format("predicted: {} wall on the GPU: 2 groups, 2 at a time",
                                format_duration(single.train + single.eval))) != std::string::npos);
  // Without measured rates, the rough line of cost/run_cost.hpp's constants.
  in.group_speeds.clear();
  CHECK(dry_run_report(in).find("rates not measured on this machine") != std::string::npos);
}

TEST_CASE(
    "the GPU sweep's groups: equal keys together, at most kMaxModelsPerGroup, largest first") {
  std::vector<int> items;
  for (int i = 0; i < kMaxModelsPerGroup + 2; ++i) items.push_back(i);
  items.push_back(-1);  // another key
  items.push_back(-2);
  const auto groups = gpu_groups(items, [](int i) { return std::string(i < 0 ? "b" : "a"); });
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].size() == static_cast<size_t>(kMaxModelsPerGroup));
  CHECK(groups[0].front() == 0);
  // The two smaller groups keep the order their first items came in: "a"'s rest, then "b".
  CHECK(groups[1] == std::vector<int>{kMaxModelsPerGroup, kMaxModelsPerGroup + 1});
  CHECK(groups[2] == std::vector<int>{-1, -2});
}

TEST_CASE("a group's rates measured on the CPU backend, with the code the GPU runs") {
  // A tiny shape: the probes train and evaluate groups of 2 (lab/run/group_speed.hpp).
  const SpeedShape shape{.n_layer = 1, .d_model = 16, .n_head = 2, .d_ff = 32, .batch_size = 8};
  const GroupSpeed s = Device::choose("cpu").measure_group_speed(shape);
  MESSAGE(describe(s));
  CHECK(usable(s));
}
