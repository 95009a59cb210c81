#include "train/time_model.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>

namespace lenlab {

namespace {

using Clock = std::chrono::steady_clock;

double thread_factor(int threads) {
  return 1 + 0.7 * (std::max(threads, 1) - 1);
}

}  // namespace

CpuSpeed measure_cpu_speed(int n, double seconds) {
  const int threads = Eigen::nbThreads();  // one core's speed: Eigen would use them all
  Eigen::setNbThreads(1);
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
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds / 3);
    best = std::max(best, 2.0 * n * n * n * iters / elapsed);
  }
  volatile float sink = c(0, 0);  // keeps the products alive
  (void)sink;
  Eigen::setNbThreads(threads);
  return {best};
}

double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  return cost.train_flops / (kTrainGemmFraction * speed.gemm_flops * thread_factor(threads));
}

double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads) {
  return cost.eval_flops / (kEvalGemmFraction * speed.gemm_flops * thread_factor(threads));
}

}  // namespace lenlab
