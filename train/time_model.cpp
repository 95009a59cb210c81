#include "train/time_model.hpp"

#include <omp.h>
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <limits>

#include "models/backend.hpp"
#include "train/evaluate.hpp"
#include "train/train_spec.hpp"
#include "train/trainer.hpp"

namespace lenlab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

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

}  // namespace

CpuSpeed measure_cpu_speed() {
  const OneThread one;
  TrainSpec spec;  // the default model and task
  spec.steps = 60;
  spec.optimizer.warmup_steps = 0;
  // The paper's test set (l_test 50, 500 sequences a length) at three of its lengths: evaluation's
  // rate falls as the set grows (measured: 500 sequences 0.8× the rate of 40), so it is measured
  // at the size the main job evaluates.
  spec.l_test = 50;
  spec.lengths = "10,30,50";
  spec.eval_samples = 500;
  const ResolvedSpec resolved = resolve(spec);
  const RunCost cost = estimate_run_cost(spec, resolved.model);
  Transformer<float> model(resolved.model);
  double train_s = std::numeric_limits<double>::infinity(), eval_s = train_s;
  for (int pass = 0; pass < 2; ++pass) {  // the first pass also warms caches and allocations
    model.init(spec.seed);
    train_s = std::min(train_s, train(model, {{&spec, &resolved}})[0].seconds);
    const auto t = Clock::now();
    evaluate(model, {eval_job(resolved, spec)});
    eval_s = std::min(eval_s, seconds_since(t));
  }
  return {cost.train_flops / train_s, cost.eval_flops / eval_s};
}

double measure_gemm_flops(int n, double seconds) {
  const OneThread one;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b;  // warm up
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    int iters = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      c.noalias() = a * b;
      ++iters;
      elapsed = seconds_since(start);
    } while (elapsed < seconds / 3);
    best = std::max(best, 2.0 * n * n * n * iters / elapsed);
  }
  volatile float sink = c(0, 0);  // keeps the products alive
  (void)sink;
  return best;
}

double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  return cost.train_flops / (speed.train_flops * thread_factor(threads));
}

double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  return cost.eval_flops / (speed.eval_flops * thread_factor(threads));
}

}  // namespace lenlab
