#pragma once
// How long work will take on this machine's CPU: a run's work (train/run_cost.hpp) over the rate
// lenlab sustains here, which is this core's measured single-precision matrix-product speed times
// the fraction of it that training and evaluation reach. The fractions were measured with
// lenlab_scaling_bench (docs/reproduction.md#predicting-a-sweep) across l_train, l_test, d_model
// and n_layer; each point's prediction is within the factor shown there.
#include "train/run_cost.hpp"

namespace lenlab {

struct CpuSpeed {
  double gemm_flops = 0;  // FLOP/s of an n×n float matrix product on one core (Eigen)
};

// Times an n×n float matrix product on the calling thread for about `seconds` (best of 3 parts).
// The predictions below use n = 512 (a 256×256 product fits in cache and swings by 2× from run to
// run here).
CpuSpeed measure_cpu_speed(int n = 512, double seconds = 0.5);

// Fractions of the matrix-product speed reached (lenlab_scaling_bench, default model).
inline constexpr double kTrainGemmFraction = 0.7;
inline constexpr double kEvalGemmFraction = 0.55;

// The run's training and evaluation on `threads` threads (threads beyond the first add 70 % each:
// the default model's products are too small to split perfectly).
double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);
double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);

}  // namespace lenlab
