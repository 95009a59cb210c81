// Training speed of the default configuration on one core, against the same core's speed on a
// 512×512 single-precision Eigen matrix product, and where a step's time goes (per operation, from
// one more pass through bench/timed_backend.hpp). Prints figures; never passes or fails on time.
//
// FLOPs are counted as the step does the work: on real tokens only (the batch is packed: there is
// no padding to count), and in the last layer past q·k·v at the S rows the head reads only:
//   forward  = Σ_linear 2·rows·in·out + Σ_(seq, head, query row i) 4·hd·(i+1)   (q·k and p·v)
//   backward = 2 × forward;  a training step = 3 × forward.
// Layer norm, GELU, softmax and the optimizer are not counted (they are O(N·d), not O(N·d²)).
#include <fmt/format.h>
#include <omp.h>
#include <Eigen/Core>

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_args.hpp"
#include "bench/timed_backend.hpp"
#include "core/error.hpp"
#include "cost/time_model.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/model_impl.hpp"  // Model<TimedBackend<…>>
#include "tasks/task.hpp"
#include "train/train_spec.hpp"
#include "train/trainer.hpp"
#include "train/trainer_impl.hpp"  // train() over it

using namespace lenlab;

namespace {

// all_rows: as if the last layer ran every row through (the step before it ran the read rows only).
double forward_flops(const ModelConfig& c, const Batch& b, bool all_rows = false) {
  const double N = b.n_tokens(), S = b.n_seq(), d = c.d_model, f = c.d_ff, hd = c.head_dim();
  const double per_row_qkv = d * 3 * d, per_row_rest = d * d + d * f + f * d;
  const double last_rows = all_rows ? N : S;
  double flops = 2 * (c.n_layer * N * per_row_qkv + (c.n_layer - 1) * N * per_row_rest +
                      last_rows * per_row_rest);
  for (int s = 0; s < b.n_seq(); ++s) {
    const double L = b.seq_len(s);
    const double all = c.n_head * 2 * hd * L * (L + 1);  // every query row i: 4·hd·(i + 1)
    flops += (c.n_layer - 1) * all + (all_rows ? all : c.n_head * 4 * hd * L);  // last row: i = L−1
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
  const double seconds = train(model, {{&spec, &resolved, {}}})[0].seconds;
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
  std::string pe = "nope";
  app.add_option("--pe", pe,
                 "Positional encoding of the benchmarked model: " +
                     join_choices(positional_encoding_names()))
      ->capture_default_str();
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);

  TrainSpec spec;  // the defaults: length task, l_train 10, batch 64, d 64, 2 layers
  spec.steps = steps;
  spec.pe = pe;
  try {
    resolve(spec);
  } catch (const UsageError& e) {
    std::cerr << "lenlab_bench: error: " << e.what() << "\n";
    return 2;
  }
  const ResolvedSpec resolved = resolve(spec);

  // The FLOPs of the exact batches train() will draw (same data stream).
  Rng rng = Rng::stream(spec.seed, 1);
  double flops = 0, flops_all_rows = 0, tokens = 0;
  for (int i = 0; i < steps; ++i) {
    const Batch b = sample_train_batch(resolved.task, spec.l_train, spec.batch_size, rng);
    flops += 3 * forward_flops(resolved.model, b);
    flops_all_rows += 3 * forward_flops(resolved.model, b, /*all_rows=*/true);
    tokens += b.n_tokens();
  }

  // Best of 3 passes, like the GEMM peak: this machine is shared and noisy.
  Transformer<float> model(resolved.model);
  double best_seconds = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    model.init(spec.seed);
    best_seconds = std::min(best_seconds, train(model, {{&spec, &resolved, {}}})[0].seconds);
  }
  const double train_gflops = flops / best_seconds * 1e-9;
  const double peak = measure_gemm_flops(512, 1.0) * 1e-9;

  fmt::print(
      "lenlab training benchmark (1 thread, default config: {} layers, d_model {}, "
      "{} heads, d_ff {}, batch {}, lengths 1..{}, pe {})\n",
      resolved.model.n_layer, resolved.model.d_model, resolved.model.n_head, resolved.model.d_ff,
      spec.batch_size, spec.l_train, spec.pe);
  fmt::print(
      "  training:          {:8.1f} steps/s  {:10.0f} tokens/s  {:6.2f} GFLOP/s "
      "({} steps in {:.2f} s, best of 3)\n",
      steps / best_seconds, tokens / best_seconds, train_gflops, steps, best_seconds);
  fmt::print("  512x512 sgemm:     {:6.2f} GFLOP/s (Eigen, same core, best of 3)\n", peak);
  fmt::print("  ratio:             {:6.1f} % of the GEMM peak\n", 100 * train_gflops / peak);
  fmt::print(
      "  work per step:     {:6.1f} MFLOP; {:.1f} MFLOP if the last layer ran every row past "
      "attention ({:.0f} % saved)\n",
      flops / steps * 1e-6, flops_all_rows / steps * 1e-6, 100 * (1 - flops / flops_all_rows));
  print_op_breakdown(spec, resolved, best_seconds);
  return 0;
}
