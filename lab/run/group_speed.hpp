#pragma once
// measure_group_speed<B>: the rates of cost/group_time_model.hpp for one model shape, measured on
// backend B by training and evaluating small groups of that shape (instantiated by
// lab/run/device.cpp for the CPU, lab/run/cuda/device_cuda.cpp for the GPU: Device's
// measure_group_speed). Each rate comes from two probes, one whose time is mostly the fixed cost
// and one whose time is mostly work:
//   training: 1 model at l_train 4, and `models` models at l_train 40, each 13 steps against 3
//     -> step_s and train_flops (t = step_s + work / train_flops at both);
//   evaluation: 1 model at one short length, and `models` at length 256 with 256 sequences
//     -> length_s and eval_flops; then 1 reverse model decoding greedily at length 16 -> row_s.
// Every probe is timed three times after a warm-up, the middle time kept. Nothing is written.
#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/group_time_model.hpp"
#include "cost/run_cost.hpp"
#include "cost/time_model.hpp"
#include "models/model.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"
#include "train/trainer.hpp"

namespace lenlab {

namespace group_speed_detail {

// The middle of three timings of f() after a first, untimed call.
template <class F>
double middle_seconds(F&& f) {
  f();
  std::array<double, 3> t{};
  for (double& s : t) {
    const auto start = std::chrono::steady_clock::now();
    f();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

// A probe: `models` copies of `spec` as one group on backend B.
template <class B>
struct Probe {
  TrainSpec spec;
  ResolvedSpec resolved;
  int models;
  Model<B> model;
  Probe(const TrainSpec& s, int k)
      : spec(s), resolved(resolve(spec)), models(k), model(resolved.model, k) {
    for (int m = 0; m < k; ++m) model.init(m, spec.seed + static_cast<uint64_t>(m));
  }
  // Seconds per training step: the difference of a 13-step and a 3-step training over their 10
  // steps, so that what a call costs once (the optimizer's state set up) is not counted.
  double step_seconds() {
    const std::vector<TrainJob> jobs(models, TrainJob{&spec, &resolved, {}});
    const auto timed = [&](int steps) {
      spec.steps = steps;
      return middle_seconds([&] { train(model, jobs); });
    };
    const double short_run = timed(3);
    return std::max(0.0, timed(13) - short_run) / 10;
  }
  // The group's work per step.
  double step_work() const {
    return models * estimate_run_cost(spec, resolved.model).train_step_flops;
  }
  // Seconds to evaluate the group at its test lengths.
  double eval_seconds() {
    EvalJob job = eval_job(resolved, spec);
    job.greedy = spec.test_attention.decode == "greedy";  // as prepare_test_time_eval sets it
    const std::vector<EvalJob> jobs(models, job);
    return middle_seconds([&] { evaluate(model, jobs); });
  }
  // The work of that evaluation.
  double eval_work() const { return models * estimate_run_cost(spec, resolved.model).eval_flops; }
};

// t = fixed + work / rate at two probes -> {fixed, rate}. Where the second probe is no slower per
// unit of extra work than the first (its time all fixed cost, to the timer's resolution), all of
// its time is taken as work: the rate is then a floor, and the prediction errs long.
inline std::pair<double, double> fixed_and_rate(double t_small, double w_small, double t_large,
                                                double w_large) {
  if (t_large > t_small && w_large > w_small) {
    const double rate = (w_large - w_small) / (t_large - t_small);
    return {std::max(0.0, t_small - w_small / rate), rate};
  }
  return {t_small, w_large / std::max(t_large, 1e-9)};
}

}  // namespace group_speed_detail

template <class B>
GroupSpeed measure_group_speed(const SpeedShape& shape, int models) {
  using group_speed_detail::Probe;
  TrainSpec spec = spec_of(shape);
  spec.threads = 1;
  GroupSpeed speed;

  // Training: a little work per step, then much more.
  spec.l_train = 4;
  spec.l_test = 4;
  Probe<B> small(spec, 1);
  const double t_small = small.step_seconds();
  spec.l_train = 40;
  spec.l_test = 40;
  Probe<B> large(spec, models);
  const double t_large = large.step_seconds();
  std::tie(speed.step_s, speed.train_flops) =
      group_speed_detail::fixed_and_rate(t_small, small.step_work(), t_large, large.step_work());

  // Evaluation: one short length of one model, then one long length of the group.
  small.spec.lengths = "8";
  small.spec.l_test = 8;
  small.spec.eval_samples = 32;
  small.resolved = resolve(small.spec);
  large.spec.lengths = "256";
  large.spec.l_test = 256;
  large.spec.eval_samples = 256;
  large.resolved = resolve(large.spec);
  const double e_small = small.eval_seconds(), e_large = large.eval_seconds();
  std::tie(speed.length_s, speed.eval_flops) =
      group_speed_detail::fixed_and_rate(e_small, small.eval_work(), e_large, large.eval_work());

  // Greedy decoding: what one length of a decoded token task costs beyond the above, per row.
  TrainSpec token = spec;
  token.task = "reverse";
  token.token.n_symbols = 2;
  token.l_train = 16;
  token.lengths = "16";
  token.l_test = 16;
  token.eval_samples = 8;
  token.test_attention.decode = "greedy";
  Probe<B> decode(token, 1);
  const double e_decode = decode.eval_seconds();
  const CostedRun costed(decode.spec, decode.resolved);
  const double rows = decoded_rows(costed, 16);
  speed.row_s =
      std::max(0.0, (e_decode - speed.length_s - decode.eval_work() / speed.eval_flops) / rows);
  return speed;
}

}  // namespace lenlab
