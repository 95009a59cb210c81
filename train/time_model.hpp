#pragma once
// How long work will take on this machine's CPU: a run's work (train/run_cost.hpp) over the rates
// lenlab itself sustains here, measured on the spot by training and evaluating the default model
// for about half a second. lenlab_scaling_bench (docs/reproduction.md#predicting-a-sweep) checks
// the model across l_train, l_test, d_model and n_layer.
//
// Why not a matrix product's speed times a fixed fraction (this model until 2026-11-25): on this
// shared machine a 512×512 sgemm ran at 84 GFLOP/s on one day and 181 on another, while a training
// step's rate moved far less (59 to 95 GFLOP/s): a fixed fraction predicted within 20 % on the slow
// day and 1.5× short on the fast one.
#include "train/run_cost.hpp"

namespace lenlab {

// Work rates on one core, in the FLOPs train/run_cost.hpp counts.
struct CpuSpeed {
  double train_flops = 0;  // FLOP/s of training steps
  double eval_flops = 0;   // FLOP/s of evaluation
};

// Trains the default model (TrainSpec{}) for 60 steps and evaluates it at lengths 10, 30 and 50
// with 500 sequences each, twice, on the calling thread with one OpenMP and Eigen thread (restored
// after): the faster pass's rates. About 0.5 s here.
CpuSpeed measure_cpu_speed();

// FLOP/s of an n×n float matrix product (Eigen) on the calling thread for about `seconds`, best
// of 3 parts: lenlab_bench's reference peak. n = 512: a 256×256 product fits in cache and swings
// by 2× from run to run here.
double measure_gemm_flops(int n = 512, double seconds = 0.5);

// The run's training and evaluation on `threads` threads (threads beyond the first add 70 % each:
// the default model's products are too small to split perfectly).
double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);
double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);

}  // namespace lenlab
