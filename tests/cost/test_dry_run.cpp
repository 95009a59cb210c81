// What a sweep will take, before it runs: --dry-run's plan and prediction, every shipped config's,
// the measured rates per model shape, shared training, the GPU's steps.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "cost/budget.hpp"
#include "cost/dry_run.hpp"
#include "cost/run_cost.hpp"
#include "cost/time_model.hpp"
#include "lab/experiment/plan.hpp"
#include "tests/support/experiment_support.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

TEST_CASE(
    "--dry-run prints the plan and its predicted time, leaves out finished runs, writes nothing") {
  const fs::path out = experiment_dir("dry-run") / "exp";  // does not exist yet
  ExperimentOptions o = tiny_options(out);
  o.dry_run = true;
  o.cpu_speed = {50e9, 40e9};  // fixed rates instead of a measurement: the same text every time
  o.sgemm_peak = 100e9;
  std::ostringstream printed;
  o.print = &printed;
  REQUIRE(run_experiment(o) == 0);
  CHECK_FALSE(fs::exists(out));
  CHECK(printed.str().find("at this core's 512x512 sgemm peak (100.0 GFLOP/s)") !=
        std::string::npos);
  CHECK(printed.str().find("lenlab trains at 50.0 GFLOP/s (a FLOP of attention costing 1.0) and "
                           "evaluates at 40.0 GFLOP/s") != std::string::npos);
  const std::string report = printed.str();
  CHECK(report.find("dry run of tiny.toml: 6 runs, 6 to train, 0 already finished") !=
        std::string::npos);
  // Both kinds of run (l_train 3; the two PEs and two reparams cost the same), 6 in all.
  CHECK(report.find("      6 ") != std::string::npos);
  CHECK(report.find("predicted: ") != std::string::npos);
  CHECK(report.find("on 2 CPU workers (--jobs 2)") != std::string::npos);

  // Two runs finished in --out: only the other four are predicted.
  o.dry_run = false;
  o.figures = {"p"};
  o.n_seeds = 1;
  REQUIRE(run_experiment(o) == 0);
  o.dry_run = true;
  o.figures.clear();
  o.n_seeds = 0;
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("6 runs, 4 to train, 2 already finished in --out") != std::string::npos);

  // Without --out: every run.
  o.out.clear();
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("6 runs, 6 to train") != std::string::npos);
  o.emit_slurm = out / "slurm";
  CHECK_THROWS_WITH_AS(run_experiment(o), doctest::Contains("--emit-slurm"), UsageError);
}

TEST_CASE("every config shipped in configs/ plans, resolves and dry-runs") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(LENLAB_CONFIGS_DIR)) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    ExperimentOptions o;
    o.config_text = read_text(e.path());
    o.config_source = e.path().filename().string();
    o.jobs = 2;
    o.device = "cpu";  // the calibrated prediction, whatever the machine has
    o.dry_run = true;
    o.cpu_speed = {50e9, 40e9};
    o.sgemm_peak = 100e9;
    // configs/chomsky.toml is weeks of work on two cores: its header says to raise --max-time.
    if (e.path().filename() == "chomsky.toml") o.budget.max_time = "1000h";
    std::ostringstream printed;
    o.print = &printed;
    CHECK(run_experiment(o) == 0);
    CHECK(printed.str().find("predicted: ") != std::string::npos);
    ++n;
  }
  CHECK(n >= 4);  // paper, smoke, tokens, methods
}

TEST_CASE("the GPU's time counts its steps, not only its FLOPs") {
  // 100 000 steps of a tiny model: a few TFLOP, well under a second at the GPU's FLOP rate, but
  // about 1 ms a step, as measured on an H100 (946 steps/s).
  TrainSpec tiny;
  tiny.l_train = 3, tiny.l_test = 5, tiny.d_model = 8, tiny.n_head = 2, tiny.d_ff = 8;
  tiny.eval_samples = 4, tiny.steps = 100000;
  const ModelConfig model = resolve(tiny).model;
  CHECK(estimate_run_cost(tiny, model).flops() / kGpuFlopsPerSecond < 1);
  CHECK_THROWS_WITH_AS(check_run_budget(tiny, Budget{"", "1s"}, /*gpu=*/true),
                       doctest::Contains("more than --max-time 1s"), UsageError);
  CHECK(check_run_budget(tiny, Budget{"", "10m"}, true).seconds >= 100);
  CHECK(check_sweep_budget({tiny, tiny}, 2, Budget{"", "10m"}, true).seconds >= 100);
  DryRunInput in;
  in.config_source = "tiny.toml";
  in.todo = {tiny};
  in.n_planned = 1;
  in.gpu = true;
  CHECK(dry_run_report(in).find("roughly 1m4") != std::string::npos);
}

TEST_CASE("--dry-run: each model shape is predicted from its own measured rates") {
  DryRunInput in;
  in.config_source = "widths.toml";
  TrainSpec narrow, wide;
  narrow.d_model = 32;
  narrow.d_ff = 128;
  in.todo = {narrow, wide};
  in.n_planned = 2;
  // The same work per FLOP, but the narrow shape runs at a tenth of the wide one's rate.
  in.speeds[speed_shape(narrow)] = {5e9, 4e9};
  in.speeds[speed_shape(wide)] = {50e9, 40e9};
  const std::string report = dry_run_report(in);
  INFO(report);
  CHECK(report.find("measured just now for each model shape:") != std::string::npos);
  CHECK(report.find("d 32/128 layers 2 heads 4 batch 64: trains at 5.0 GFLOP/s (a FLOP of "
                    "attention costing 1.0) and evaluates at 4.0 GFLOP/s") != std::string::npos);
  CHECK(report.find("d 64/256 layers 2 heads 4 batch 64: trains at 50.0 GFLOP/s") !=
        std::string::npos);
  // Each kind's line carries its own shape's prediction.
  const auto predicted_train_s = [&](const TrainSpec& s, const CpuSpeed& speed) {
    return predicted_train_seconds(estimate_run_cost(s, resolve(s).model), speed);
  };
  CHECK(report.find(fmt::format("{:>8.1f}s", predicted_train_s(narrow, {5e9, 4e9}))) !=
        std::string::npos);
  CHECK(report.find(fmt::format("{:>8.1f}s", predicted_train_s(wide, {50e9, 40e9}))) !=
        std::string::npos);
  CHECK(predicted_train_s(narrow, {5e9, 4e9}) > 2 * predicted_train_s(wide, {50e9, 40e9}));
}

TEST_CASE("a sweep's predicted times: shared training counted once, runs on the free worker") {
  TrainSpec base;
  base.steps = 100;
  TrainSpec a = base, b = base, c = base;
  b.test_attention.temperature = "2";  // differs only in test-time attention: shares a's training
  c.task = "sum";
  const std::map<SpeedShape, CpuSpeed> speeds = cpu_speeds({a, b, c}, {50e9, 40e9, 3});
  REQUIRE(speeds.size() == 1);
  CHECK(speeds.begin()->second.attention_weight == 3);  // the fixed rates, nothing measured
  const SweepTimes one = predict_sweep({a, b, c}, speeds, 1, 2);
  REQUIRE(one.train_s.size() == 3);
  const CpuSpeed& speed = speeds.begin()->second;
  const RunCost cost = estimate_run_cost(a, resolve(a).model);
  CHECK(one.train_s[0] == doctest::Approx(predicted_train_seconds(cost, speed)));
  CHECK(one.eval_s[0] == doctest::Approx(predicted_eval_seconds(cost, speed)));
  CHECK(one.train_s[1] == 0);
  CHECK(one.training_shared == std::vector<bool>{false, true, false});
  const double total =
      one.train_s[0] + one.eval_s[0] + one.eval_s[1] + one.train_s[2] + one.eval_s[2];
  CHECK(one.wall == doctest::Approx(total));  // one worker does it all
  // Two workers: a and b are one work item, c the other.
  const SweepTimes two = predict_sweep({a, b, c}, speeds, 2, 2);
  CHECK(two.wall == doctest::Approx(std::max(one.train_s[0] + one.eval_s[0] + one.eval_s[1],
                                             one.train_s[2] + one.eval_s[2])));
  // Four workers on two cores share them: each item takes twice as long.
  CHECK(predict_sweep({a, b, c}, speeds, 4, 2).wall == doctest::Approx(2 * two.wall));

  // The line before long work: the rough estimate's memory and work, the measured rates' time.
  WorkEstimate rough;
  rough.seconds = 1e4;
  rough.flops = 1e15;
  rough.where = "2 CPU workers";
  const WorkEstimate shown = with_measured_time(rough, {a, b, c}, 2, 2, {50e9, 40e9, 3});
  CHECK(shown.seconds == doctest::Approx(two.wall));
  CHECK(shown.flops == rough.flops);
  CHECK(shown.summary().find("on 2 CPU workers (at lenlab's rates on this core, measured just "
                             "now)") != std::string::npos);
}

TEST_CASE("--dry-run's FLOP floor: the work, shared training once, over the cores at the peak") {
  TrainSpec base;
  base.steps = 100;
  TrainSpec a = base, b = base, c = base;
  b.test_attention.temperature = "2";  // shares a's training
  c.task = "sum";
  DryRunInput in;
  in.config_source = "floor.toml";
  in.todo = {a, b, c};
  in.n_planned = 3;
  in.jobs = 4;  // more workers than cores: the floor counts the cores
  in.cores = 2;
  in.speeds = cpu_speeds({a, b, c}, {50e9, 40e9});
  in.sgemm_peak = 80e9;
  const double flops =
      in.todo[0].cost.flops() + in.todo[1].cost.eval_flops + in.todo[2].cost.flops();
  const double floor = flops / (2 * 80e9);
  const double wall = predict_sweep(in.todo, in.speeds, 4, 2).wall;
  const std::string report = dry_run_report(in);
  INFO(report);
  CHECK(report.find(fmt::format("FLOP floor: {} of training and evaluation on 2 cores at this "
                                "core's 512x512 sgemm peak (80.0 GFLOP/s) take at least {}; the "
                                "prediction is {:.1f}x that",
                                format_flops(flops), format_duration(floor), wall / floor)) !=
        std::string::npos);
  CHECK(wall / floor > 1);  // 50 and 40 GFLOP/s, below the peak
  in.sgemm_peak = 0;        // not measured: no floor
  CHECK(dry_run_report(in).find("FLOP floor") == std::string::npos);
}

TEST_CASE("the sweep's wall time: runs handed to the worker that is free first") {
  CHECK(list_schedule_seconds({}, 2) == 0);
  CHECK(list_schedule_seconds({3, 1, 1, 1}, 2) == 3);  // one worker takes 3, the other 1 + 1 + 1
  CHECK(list_schedule_seconds({1, 1, 3}, 2) == 4);     // the long run starts last
  CHECK(list_schedule_seconds({2, 2, 2}, 1) == 6);
  CHECK(list_schedule_seconds({2, 2, 2}, 8) == 2);
}
