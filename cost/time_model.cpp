#include "cost/time_model.hpp"

#include <omp.h>
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/cpu_time.hpp"
#include "models/cpu/backend.hpp"
#include "models/cpu/blas_gemm.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"
#include "train/trainer.hpp"

namespace lenlab {

namespace {

// Every measurement here runs on the calling thread alone (OneThread below; lenlab starts no
// threads of its own) and is timed in that thread's CPU time (core/cpu_time.hpp): a dry run niced
// behind a compile measured rates 50x too slow by the clock and predicted 72 hours for a sweep
// that took 1 h 19 min (docs/run_times.md).

double thread_factor(int threads) {
  return 1 + 0.7 * (std::max(threads, 1) - 1);
}

// One core's speed: Eigen and OpenMP would use them all. Restores both counts when it ends.
class OneThread {
 public:
  OneThread() : eigen_(Eigen::nbThreads()), omp_(omp_get_max_threads()) {
    Eigen::setNbThreads(1);
    omp_set_num_threads(1);
  }
  ~OneThread() {
    Eigen::setNbThreads(eigen_);
    omp_set_num_threads(omp_);
  }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int eigen_, omp_;
};

// Steps in a timed training pass of about 0.1 s: 3 to 500.
int steps_for(double seconds_per_step) {
  return std::clamp(static_cast<int>(0.1 / std::max(seconds_per_step, 1e-9)), 3, 500);
}

// The middle of three passes: a long run sustains about that, where the fastest of a few short
// passes predicted runs 3-15 % short.
double median(std::array<double, 3> passes) {
  std::sort(passes.begin(), passes.end());
  return passes[1];
}

}  // namespace

SpeedShape speed_shape(const TrainSpec& spec) {
  return {spec.n_layer, spec.d_model, spec.n_head, spec.d_ff, spec.batch_size};
}

TrainSpec spec_of(const SpeedShape& shape) {
  TrainSpec spec;
  spec.n_layer = shape.n_layer;
  spec.d_model = shape.d_model;
  spec.n_head = shape.n_head;
  spec.d_ff = shape.d_ff;
  spec.batch_size = shape.batch_size;
  spec.optimizer.warmup_steps = 0;
  return spec;
}

std::string describe(const SpeedShape& s) {
  return fmt::format("d {}/{} layers {} heads {} batch {}", s.d_model, s.d_ff, s.n_layer, s.n_head,
                     s.batch_size);
}

CpuSpeed measure_cpu_speed(const SpeedShape& shape) {
  const OneThread one;
  TrainSpec spec = spec_of(shape);
  // The paper's test set (l_test 50, 500 sequences a length) at six of its lengths: evaluation's
  // rate falls as the set grows (measured: 500 sequences 0.8× the rate of 40), so it is measured
  // at the size the main job evaluates.
  spec.l_test = 50;
  spec.lengths = "8,16,24,32,40,48";
  spec.eval_samples = 500;
  const ResolvedSpec resolved = resolve(spec);
  Transformer<float> model(resolved.model);
  const auto timed_train = [&](int steps) {  // CPU seconds per step
    spec.steps = steps;
    model.init(spec.seed);
    const double start = thread_cpu_seconds();
    train(model, {{&spec, &resolved, {}}});
    return cpu_seconds_since(start) / steps;
  };
  // Per step: the work that is not attention's, and attention's.
  const auto step_work = [&] {
    const RunCost c = estimate_run_cost(spec, resolved.model);
    return std::pair{(c.train_flops - c.train_attention_flops) / spec.steps,
                     c.train_attention_flops / spec.steps};
  };
  const auto [other_flops, attention_flops] = step_work();
  const double step_flops = other_flops + attention_flops;
  // A first short pass warms caches and allocations and sizes the timed passes.
  const double first_step_s = timed_train(5);
  const int steps = steps_for(first_step_s);
  // Evaluation runs below training's rate (measured 0.6-0.7×): a set that would take longer than
  // 0.3 s at that rate (the default shape's takes about 0.2 s) is cut to fit it, to no fewer than
  // 40 sequences a length.
  const double full_eval_s =
      estimate_run_cost(spec, resolved.model).eval_flops * first_step_s / (0.6 * step_flops);
  spec.eval_samples = std::clamp(static_cast<int>(500 * 0.3 / full_eval_s), 40, 500);
  const double eval_flops = estimate_run_cost(spec, resolved.model).eval_flops;
  // Each evaluation follows a training pass, as in a run (two evaluations back to back measured
  // 1.1× faster than runs then evaluated).
  std::array<double, 3> step_passes{}, eval_passes{};
  for (int pass = 0; pass < 3; ++pass) {
    step_passes[pass] = timed_train(steps);
    const double start = thread_cpu_seconds();
    evaluate(model, {eval_job(resolved, spec)});
    eval_passes[pass] = cpu_seconds_since(start);
  }
  const double step_s = median(step_passes), eval_s = median(eval_passes);

  // Attention's FLOPs cost more than a matrix product's (short per-head dot products, the softmax):
  // the step at l_train 40, where attention is a larger part of the work, tells how much more.
  //   t = (other + weight · attention) / rate  at both l_train  =>  weight, rate
  const int l_train = spec.l_train;
  spec.l_train = 40;
  const auto [other_40, attention_40] = step_work();
  const int steps_40 = steps_for(timed_train(3));
  std::array<double, 3> passes_40{};
  for (double& t : passes_40) t = timed_train(steps_40);
  const double step_40_s = median(passes_40);
  spec.l_train = l_train;
  const double denominator = step_40_s * attention_flops - step_s * attention_40;
  const double weight =
      denominator >= 0 ? kMaxAttentionWeight
                       : std::clamp((step_s * other_40 - step_40_s * other_flops) / denominator,
                                    1.0, kMaxAttentionWeight);
  return {(other_flops + weight * attention_flops) / step_s, eval_flops / eval_s, weight};
}

namespace {

// FLOP/s of product() (`flops` a call) on the calling thread, one OpenMP and Eigen thread, for
// about `seconds`: a warm-up call, then the best of 3 parts.
template <class F>
double best_rate(F&& product, double flops, double seconds) {
  const OneThread one;
  product();
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    int iters = 0;
    const double start = thread_cpu_seconds();
    double elapsed = 0;
    do {
      product();
      ++iters;
      elapsed = cpu_seconds_since(start);
    } while (elapsed < seconds / 3);
    best = std::max(best, flops * iters / elapsed);
  }
  return best;
}

}  // namespace

double measure_gemm_flops(int n, double seconds) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  const double rate = best_rate([&] { c.noalias() = a * b; }, 2.0 * n * n * n, seconds);
  volatile float sink = c(0, 0);  // keeps the products alive
  (void)sink;
  return rate;
}

double measure_openblas_gemm_flops(int n, double seconds) {
  if (!cpu::openblas_available()) return 0;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  return best_rate(
      [&] { cpu::blas_sgemm(false, false, n, n, n, a.data(), n, b.data(), n, 0.f, c.data(), n); },
      2.0 * n * n * n, seconds);
}

double measure_sgemm_peak(double seconds) {
  return std::max(measure_gemm_flops(512, seconds), measure_openblas_gemm_flops(512, seconds));
}

double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  const double work = cost.train_flops + (speed.attention_weight - 1) * cost.train_attention_flops;
  return work / (speed.train_flops * thread_factor(threads));
}

double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  return cost.eval_flops / (speed.eval_flops * thread_factor(threads));
}

}  // namespace lenlab
