#pragma once
// How long work will take on this machine's CPU: a run's work (cost/run_cost.hpp) over the rates
// lenlab itself sustains here for that run's model shape, measured on the spot by training and
// evaluating a model of that shape for a fraction of a second. lenlab_scaling_bench
// (docs/reproduction.md#predicting-a-sweep) checks the model across l_train, l_test, d_model and
// n_layer.
//
// Why not a matrix product's speed times a fixed fraction (this model until 2026-11-25): on this
// shared machine a 512×512 sgemm ran at 84 GFLOP/s on one day and 181 on another, while a training
// step's rate moved far less (59 to 95 GFLOP/s): a fixed fraction predicted within 20 % on the slow
// day and 1.5× short on the fast one. Why per shape (since 2026-11-25): the default model's rates
// predicted a d_model-32 model 1.6–1.7× short (the work that is not a matrix product weighs more
// there) and a d_model-128 one 1.25–1.4× long (larger products run faster).
#include <compare>
#include <string>

#include "cost/run_cost.hpp"

namespace lenlab {

// Work rates on one core, in the FLOPs cost/run_cost.hpp counts.
struct CpuSpeed {
  double train_flops = 0;  // FLOP/s of training steps, attention's FLOPs weighed as below
  double eval_flops = 0;   // FLOP/s of evaluation
  // How many of the other work's FLOPs one FLOP of training attention costs (its per-head dot
  // products are short, and the softmax is not counted): measured 6-11 here.
  double attention_weight = 1;
};
inline constexpr double kMaxAttentionWeight = 50;

// What a run's rates depend on beyond the work counted in cost/run_cost.hpp: the sizes of its
// matrix products. Runs of one shape share one measurement.
struct SpeedShape {
  int n_layer = 2, d_model = 64, n_head = 4, d_ff = 256, batch_size = 64;
  friend auto operator<=>(const SpeedShape&, const SpeedShape&) = default;
};
SpeedShape speed_shape(const TrainSpec& spec);
// The default task's spec at this shape, without warm-up: what the rates are measured on.
TrainSpec spec_of(const SpeedShape& shape);
std::string describe(const SpeedShape& shape);  // "d 64/256 layers 2 heads 4 batch 64"

// Trains a model of `shape` on the default task and evaluates it at lengths 8, 16, .., 48, on the
// calling thread with one OpenMP and Eigen thread (restored after): 5 steps warm the caches and
// time a step, then three passes of training for about 0.1 s (3 to 500 steps), each followed by an
// evaluation with 500 test sequences a length (fewer for a model too large to evaluate them in
// about 0.3 s), give the rates (the middle pass's); three more passes of training at l_train 40
// give attention's weight. About 0.8 s here for the default shape. Every time is the calling
// thread's CPU time, not wall time: the rates are this core's, however busy the machine is while
// they are measured (a busy machine makes the sweep slower, not the prediction).
CpuSpeed measure_cpu_speed(const SpeedShape& shape = {});

// FLOP/s of an n×n float matrix product (Eigen) on the calling thread for about `seconds` of its
// CPU time, best of 3 parts. n = 512: a 256×256 product fits in cache and swings by 2× from run to
// run here.
double measure_gemm_flops(int n = 512, double seconds = 0.5);
// The same with OpenBLAS's sgemm (cpu::blas_sgemm); 0 in a build without OpenBLAS.
double measure_openblas_gemm_flops(int n = 512, double seconds = 0.5);
// The core's float peak as lenlab_bench and the dry run's FLOP floor state it: the faster of the
// two 512×512 products above.
double measure_sgemm_peak(double seconds = 0.5);

// The run's training and evaluation on `threads` threads (threads beyond the first add 70 % each:
// the default model's products are too small to split perfectly).
double predicted_train_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);
double predicted_eval_seconds(const RunCost& cost, const CpuSpeed& speed, int threads = 1);

}  // namespace lenlab
