#include "cost/dry_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <tuple>

#include "core/progress.hpp"
#include "cost/budget.hpp"
#include "cost/run_cost.hpp"
#include "train/inference_attention.hpp"

namespace lenlab {

double list_schedule_seconds(const std::vector<double>& seconds, int workers) {
  // Each worker's finishing time; the next run goes to the one that finishes first.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int w = 0; w < std::max(workers, 1); ++w) free_at.push(0);
  double wall = 0;
  for (double s : seconds) {
    const double done = free_at.top() + s;
    free_at.pop();
    free_at.push(done);
    wall = std::max(wall, done);
  }
  return wall;
}

std::vector<TrainSpec> specs_of(const std::vector<CostedRun>& runs) {
  std::vector<TrainSpec> specs;
  for (const CostedRun& r : runs) specs.push_back(r.spec);
  return specs;
}

std::map<SpeedShape, CpuSpeed> cpu_speeds(const std::vector<TrainSpec>& runs,
                                          const CpuSpeed& fixed) {
  std::map<SpeedShape, CpuSpeed> speeds;
  for (const TrainSpec& r : runs) {
    const SpeedShape shape = speed_shape(r);
    if (!speeds.contains(shape))
      speeds[shape] = fixed.train_flops > 0 ? fixed : measure_cpu_speed(shape);
  }
  return speeds;
}

SweepTimes predict_sweep(const std::vector<CostedRun>& runs,
                         const std::map<SpeedShape, CpuSpeed>& speeds, int jobs, int cores) {
  // More jobs than cores share the cores: each run then takes jobs/cores times as long.
  const double sharing = std::max(1.0, static_cast<double>(jobs) / std::max(cores, 1));
  SweepTimes times;
  std::vector<double> items;  // seconds of each work item, in the order the sweep starts them
  // Runs that differ only in their test-time attention train once (lab/experiment/sweep.hpp): one
  // work item.
  std::map<std::string, size_t> item_of;
  for (const CostedRun& run : runs) {
    const TrainSpec& r = run.spec;
    const RunCost& cost = run.cost;
    const auto [item, fresh] = item_of.try_emplace(training_spec_text(r), items.size());
    const CpuSpeed& speed = speeds.at(speed_shape(r));
    const double t = fresh ? predicted_train_seconds(cost, speed, r.threads) : 0;
    const double e = predicted_eval_seconds(cost, speed, r.threads);
    if (fresh) items.push_back(0);
    items[item->second] += (t + e) * sharing;
    times.train_s.push_back(t);
    times.eval_s.push_back(e);
    times.training_shared.push_back(!fresh);
  }
  times.wall = list_schedule_seconds(items, jobs);
  return times;
}

WorkEstimate with_measured_time(WorkEstimate rough, const std::vector<CostedRun>& runs, int jobs,
                                int cores, const CpuSpeed& fixed) {
  rough.seconds = predict_sweep(runs, cpu_speeds(specs_of(runs), fixed), jobs, cores).wall;
  rough.where += " (at lenlab's rates on this core, measured just now)";
  return rough;
}

namespace {

// The settings a run's cost depends on, as its line in the report.
std::string cost_key(const TrainSpec& s) {
  std::string key = fmt::format(
      "{} l_train {} {} steps {} batch {} eval {} d {}/{} layers {}", s.task, s.l_train,
      s.lengths.empty() ? fmt::format("l_test {}", s.l_test) : fmt::format("lengths {}", s.lengths),
      s.steps, s.batch_size, s.eval_samples, s.d_model, s.d_ff, s.n_layer);
  if (s.misalign.views()) key += " misalignment views";  // two views of l_train per sequence
  if (temperature_alignment(s.test_attention)) key += " temperature search";
  if (s.threads > 1) key += fmt::format(" threads {}", s.threads);
  return key;
}

struct Kind {
  int runs = 0;
  double train_s = 0, eval_s = 0;  // per run
};

// A GPU sweep with measured rates: each group's time (cost/group_time_model.hpp), one line per
// kind of group (its first run's settings and its size), and the groups handed to `jobs` streams.
std::string gpu_report(const DryRunInput& in) {
  std::string text;
  if (in.group_speeds.size() == 1) {
    const auto& [shape, speed] = *in.group_speeds.begin();
    text += fmt::format("on {}, measured just now for {}: {}\n", in.device_label, describe(shape),
                        describe(speed));
  } else {
    text += fmt::format("on {}, measured just now for each model shape:\n", in.device_label);
    for (const auto& [shape, speed] : in.group_speeds)
      text += fmt::format("  {}: {}\n", describe(shape), describe(speed));
  }
  std::map<std::string, Kind> kinds;
  std::vector<std::string> order;
  std::vector<double> group_s;  // each group's time, in the order the sweep starts them
  double train_total = 0, eval_total = 0;
  for (const std::vector<size_t>& group : in.groups) {
    std::vector<const CostedRun*> runs;
    for (const size_t i : group) runs.push_back(&in.todo.at(i));
    const GroupSeconds s =
        predicted_group_seconds(runs, in.group_speeds.at(speed_shape(runs[0]->spec)));
    group_s.push_back(s.train + s.eval);
    train_total += s.train;
    eval_total += s.eval;
    const std::string key = fmt::format("{:>5}  {}", runs.size(), cost_key(runs[0]->spec));
    auto [it, added] = kinds.try_emplace(key, Kind{0, s.train, s.eval});
    if (added) order.push_back(key);
    ++it->second.runs;
  }
  text += "predicted per group (cost/group_time_model.hpp, docs/gpu.md#predicting-a-sweep):\n";
  text += fmt::format("  {:>6} {:>5} {:>9} {:>9}  settings of its first run\n", "groups", "runs",
                      "train", "eval");
  for (const std::string& key : order) {
    const Kind& k = kinds.at(key);
    text += fmt::format("  {:>6} {} {:>8.1f}s {:>8.1f}s  {}\n", k.runs, key.substr(0, 5), k.train_s,
                        k.eval_s, key.substr(7));
  }
  const int jobs = std::max(1, std::min(in.jobs, static_cast<int>(in.groups.size())));
  text += fmt::format(
      "predicted: {} wall on the GPU: {} group{}, {} at a time on their own streams (taken to "
      "overlap fully), {} of training and {} of evaluation in group time; peak memory about {}\n",
      format_duration(list_schedule_seconds(group_s, jobs)), in.groups.size(),
      in.groups.size() == 1 ? "" : "s", jobs, format_duration(train_total),
      format_duration(eval_total), format_bytes(in.peak_bytes));
  return text + "nothing was trained or written; drop --dry-run to run it\n";
}

}  // namespace

std::string dry_run_report(const DryRunInput& in) {
  const size_t done = in.n_planned - in.todo.size();
  std::string text = fmt::format(
      "dry run of {}: {} run{}, {} to train, {} already finished in --out\n", in.config_source,
      in.n_planned, in.n_planned == 1 ? "" : "s", in.todo.size(), done);
  if (in.todo.empty()) return text + "nothing to train: the figures would only be redrawn\n";

  if (in.gpu && !in.group_speeds.empty()) return text + gpu_report(in);
  if (in.gpu) {
    double flops = 0, longest_steps = 0;
    for (const CostedRun& r : in.todo) {
      flops += r.cost.flops();
      longest_steps = std::max<double>(longest_steps, r.spec.steps);
    }
    return text + fmt::format(
                      "on the GPU: {} of work, roughly {} at {:.0e} FLOP/s and at least {:.0f} ms "
                      "a step (rates not measured on this machine; the CPU prediction is "
                      "calibrated, this one is not)\n",
                      format_flops(flops), format_duration(gpu_seconds(flops, longest_steps)),
                      kGpuFlopsPerSecond, kGpuSecondsPerStep * 1e3);
  }

  const SweepTimes times = predict_sweep(in.todo, in.speeds, in.jobs, in.cores);
  std::map<std::string, Kind> kinds;
  std::vector<std::string> order;  // kinds in plan order
  double train_total = 0, eval_total = 0;
  int shared = 0;  // runs whose training another run's serves
  for (size_t i = 0; i < in.todo.size(); ++i) {
    const double t = times.train_s[i], e = times.eval_s[i];
    const bool fresh = !times.training_shared[i];
    shared += !fresh;
    train_total += t;
    eval_total += e;
    const std::string key = cost_key(in.todo[i].spec) + (fresh ? "" : " (training shared)");
    auto [it, added] = kinds.try_emplace(key, Kind{0, t, e});
    if (added) order.push_back(key);
    ++it->second.runs;
  }
  if (shared > 0)
    text += fmt::format(
        "{} run{} differ from another only in test-time attention and share its training\n", shared,
        shared == 1 ? "" : "s");
  // The rates, measured just now for each model shape of the sweep.
  const auto rates = [](const CpuSpeed& s) {
    return fmt::format(
        "trains at {:.1f} GFLOP/s (a FLOP of attention costing {:.1f}) and evaluates at {:.1f} "
        "GFLOP/s",
        s.train_flops * 1e-9, s.attention_weight, s.eval_flops * 1e-9);
  };
  if (in.speeds.size() == 1) {
    const auto& [shape, speed] = *in.speeds.begin();
    text += fmt::format("on this core lenlab {} ({}, measured just now)", rates(speed),
                        describe(shape));
  } else {
    text += "on this core lenlab, measured just now for each model shape:\n";
    for (const auto& [shape, speed] : in.speeds)
      text += fmt::format("  {}: {}\n", describe(shape), rates(speed));
  }
  text += fmt::format(
      "{}predicted per run (cost/time_model.hpp, docs/reproduction.md#predicting-a-sweep):\n",
      in.speeds.size() == 1 ? "; " : "");
  text += fmt::format("  {:>5} {:>9} {:>9}  settings\n", "runs", "train", "eval");
  for (const std::string& key : order) {
    const Kind& k = kinds.at(key);
    text += fmt::format("  {:>5} {:>8.1f}s {:>8.1f}s  {}\n", k.runs, k.train_s, k.eval_s, key);
  }
  text += fmt::format(
      "predicted: {} wall on {} CPU worker{} (--jobs {}): {} of training and {} of evaluation "
      "in CPU time; peak memory about {}\n",
      format_duration(times.wall), in.jobs, in.jobs == 1 ? "" : "s", in.jobs,
      format_duration(train_total), format_duration(eval_total), format_bytes(in.peak_bytes));
  if (in.sgemm_peak > 0) {
    double flops = 0;  // the work, shared training once
    for (size_t i = 0; i < in.todo.size(); ++i)
      flops +=
          (times.training_shared[i] ? 0 : in.todo[i].cost.train_flops) + in.todo[i].cost.eval_flops;
    const int cores = std::max(1, std::min(in.jobs, in.cores));
    const double floor = flops / (cores * in.sgemm_peak);
    text += fmt::format(
        "FLOP floor: {} of training and evaluation on {} core{} at this core's 512x512 sgemm "
        "peak ({:.1f} GFLOP/s) take at least {}; the prediction is {:.1f}x that\n",
        format_flops(flops), cores, cores == 1 ? "" : "s", in.sgemm_peak * 1e-9,
        format_duration(floor), times.wall / floor);
  }
  return text + "nothing was trained or written; drop --dry-run to run it\n";
}

}  // namespace lenlab
