// Training speed of the default configuration on one core, against the same core's speed on a
// 512×512 single-precision Eigen matrix product, and where a step's time goes (per operation, from
// one more pass through bench/timed_backend.hpp). Prints figures; never passes or fails on time.
//
// FLOPs are counted on real tokens only (the batch is packed: there is no padding to count):
//   forward  = Σ_linear 2·rows·in·out + Σ_(seq, head) 2·hd·L(L+1)   (q·k and p·v, causal half)
//   backward = 2 × forward;  a training step = 3 × forward.
// Layer norm, GELU, softmax and the optimizer are not counted (they are O(N·d), not O(N·d²)).
#include <fmt/format.h>
#include <omp.h>
#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_args.hpp"
#include "bench/timed_backend.hpp"
#include "models/backend.hpp"
#include "models/model.hpp"
#include "models/model_impl.hpp"  // Model<TimedBackend<…>>
#include "tasks/task.hpp"
#include "train/train_spec.hpp"
#include "train/trainer.hpp"
#include "train/trainer_impl.hpp"  // train() over it

using namespace lenlab;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Best-of-5 GFLOP/s of C = A·B for n×n float matrices.
double gemm_gflops(int n) {
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b;  // warm up
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    int iters = 0;
    const auto t = Clock::now();
    do {
      c.noalias() = a * b;
      ++iters;
    } while (seconds_since(t) < 0.2);
    best = std::max(best, 2.0 * n * n * n * iters / seconds_since(t) * 1e-9);
  }
  if (c(0, 0) == 12345.f) std::puts("");  // keep the product alive
  return best;
}

double forward_flops(const ModelConfig& c, const Batch& b) {
  const double N = b.n_tokens(), S = b.n_seq(), d = c.d_model, f = c.d_ff, hd = c.head_dim();
  double flops = c.n_layer * 2 * N * (d * 3 * d + d * d + d * f + f * d);
  for (int s = 0; s < b.n_seq(); ++s) {
    const double L = b.seq_len(s);
    flops += c.n_layer * c.n_head * 2 * hd * L * (L + 1);
  }
  return flops + 2 * S * (d * d + d);  // the head on the EOS tokens
}

// One more training pass with every operation timed: per operation its calls and time per step
// and its share of the step; the rest is the host's own work (batch sampling, packing, the
// optimizer's bookkeeping, memory helpers).
void print_op_breakdown(const TrainSpec& spec, const ResolvedSpec& resolved, double best_seconds) {
  Model<TimedBackend<CpuBackend<float>>> model(resolved.model);
  model.init(spec.seed);
  op_tallies().clear();
  const double seconds = train(model, {{&spec, &resolved}})[0].seconds;
  std::vector<std::pair<std::string, OpTally>> ops(op_tallies().begin(), op_tallies().end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  const double steps = spec.steps;
  fmt::print(
      "  where a step goes (one more pass with every operation timed: {:.2f} s, {:+.1f} % against "
      "the best pass):\n",
      seconds, 100 * (seconds / best_seconds - 1));
  fmt::print("    {:<22} {:>10} {:>12} {:>8}\n", "operation", "calls/step", "us/step", "share");
  double timed = 0;
  for (const auto& [name, t] : ops) {
    timed += t.seconds;
    fmt::print("    {:<22} {:>10.0f} {:>12.1f} {:>7.1f}%\n", name, t.calls / steps,
               1e6 * t.seconds / steps, 100 * t.seconds / seconds);
  }
  fmt::print("    {:<22} {:>10} {:>12.1f} {:>7.1f}%\n", "the rest (host work)", "",
             1e6 * (seconds - timed) / steps, 100 * (seconds - timed) / seconds);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  CLI::App app{
      "Training speed of the default configuration on one core, against the same core's "
      "512x512 sgemm peak. Prints figures; never fails on time.",
      "lenlab_bench"};
  add_steps_argument(app, steps, "Training steps per pass (best of 3 passes)");
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);

  TrainSpec spec;  // the defaults: length task, NoPE, l_train 10, batch 64, d 64, 2 layers
  spec.steps = steps;
  const ResolvedSpec resolved = resolve(spec);

  // The FLOPs of the exact batches train() will draw (same data stream).
  Rng rng = Rng::stream(spec.seed, 1);
  double flops = 0, tokens = 0;
  for (int i = 0; i < steps; ++i) {
    const Batch b = sample_train_batch(resolved.task, spec.l_train, spec.batch_size, rng);
    flops += 3 * forward_flops(resolved.model, b);
    tokens += b.n_tokens();
  }

  // Best of 3 passes, like the GEMM peak: this machine is shared and noisy.
  Transformer<float> model(resolved.model);
  double best_seconds = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    model.init(spec.seed);
    best_seconds = std::min(best_seconds, train(model, {{&spec, &resolved}})[0].seconds);
  }
  const double train_gflops = flops / best_seconds * 1e-9;
  const double peak = gemm_gflops(512);

  fmt::print(
      "lenlab training benchmark (1 thread, default config: {} layers, d_model {}, "
      "{} heads, d_ff {}, batch {}, lengths 1..{})\n",
      resolved.model.n_layer, resolved.model.d_model, resolved.model.n_head, resolved.model.d_ff,
      spec.batch_size, spec.l_train);
  fmt::print(
      "  training:          {:8.1f} steps/s  {:10.0f} tokens/s  {:6.2f} GFLOP/s "
      "({} steps in {:.2f} s, best of 3)\n",
      steps / best_seconds, tokens / best_seconds, train_gflops, steps, best_seconds);
  fmt::print("  512x512 sgemm:     {:6.2f} GFLOP/s (Eigen, same core, best of 5)\n", peak);
  fmt::print("  ratio:             {:6.1f} % of the GEMM peak\n", 100 * train_gflops / peak);
  print_op_breakdown(spec, resolved, best_seconds);
  return 0;
}
