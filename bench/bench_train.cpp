// Training and evaluation speed on one core, against the same core's sgemm peak, with the float
// linear layers on each kernel (Eigen's general product and OpenBLAS's sgemm, models/cpu/
// blas_gemm.hpp) side by side in one run, for the default model and for d_model 128 and 256 (4
// layers, d_ff 4·d); where a step's time goes (per operation, from one more pass through
// bench/timed_backend.hpp); and the inference forward's throughput at test lengths 64..4096.
// Prints figures; never passes or fails on time. The passes are timed in the thread's CPU time
// (core/cpu_time.hpp), so other work on the machine lowers them little; the per-operation
// breakdown, whose timer is read around every operation, by the clock (a CPU-time read is a
// system call): on a busy machine its "against the best pass" reads high.
//
// The core's peak: the faster of Eigen's and OpenBLAS's 512×512 sgemm on this core (best of 3).
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

#include "bench/attention_speed.hpp"
#include "bench/bench_args.hpp"
#include "bench/timed_backend.hpp"
#include "core/cpu_time.hpp"
#include "core/error.hpp"
#include "cost/time_model.hpp"
#include "models/cpu/backend.hpp"
#include "models/cpu/blas_gemm.hpp"
#include "models/model.hpp"
#include "models/model_impl.hpp"  // Model<TimedBackend<…>>
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/evaluate.hpp"
#include "train/evaluate_impl.hpp"  // evaluate() over Transformer<float>
#include "train/run_settings.hpp"
#include "train/trainer.hpp"
#include "train/trainer_impl.hpp"  // train() over it

using namespace lenlab;
using cpu::GemmKernel;

namespace {

// The forward FLOPs of sequences of these token counts. all_rows: the last layer runs every row
// through (a token task reading every row, as the text model's; otherwise the read rows only,
// one per sequence); with_attention false: the linear layers' products alone.
double forward_flops(const ModelConfig& c, const std::vector<int>& seq_tokens,
                     bool all_rows = false, bool with_attention = true) {
  double N = 0;
  for (const int L : seq_tokens) N += L;
  const double S = seq_tokens.size(), d = c.d_model, f = c.d_ff, hd = c.head_dim();
  const double per_row_qkv = d * 3 * d, per_row_rest = d * d + d * f + f * d;
  const double last_rows = all_rows ? N : S;
  double flops = 2 * (c.n_layer * N * per_row_qkv + (c.n_layer - 1) * N * per_row_rest +
                      last_rows * per_row_rest);
  for (const double L : with_attention ? seq_tokens : std::vector<int>{}) {
    const double all = c.n_head * 2 * hd * L * (L + 1);  // every query row i: 4·hd·(i + 1)
    flops += (c.n_layer - 1) * all + (all_rows ? all : c.n_head * 4 * hd * L);  // last row: i = L−1
  }
  if (c.token_head) flops += 2 * last_rows * d * c.vocab_size;  // the logits of the read rows
  if (c.scalar_head) flops += 2 * S * (d * d + d);              // the head on the EOS tokens
  return flops;
}

std::vector<int> token_counts(const Batch& b) {
  std::vector<int> out(b.n_seq());
  for (int s = 0; s < b.n_seq(); ++s) out[s] = b.seq_len(s);
  return out;
}

const char* kernel_name(GemmKernel k) {
  return k == GemmKernel::kOpenBlas ? "OpenBLAS" : "Eigen";
}

// The 512×512 sgemm of the kernel, GFLOP/s on one core (cost/time_model.hpp, best of 3).
double sgemm_peak(GemmKernel kernel) {
  return (kernel == GemmKernel::kEigen ? measure_gemm_flops(512, 1.0)
                                       : measure_openblas_gemm_flops(512, 1.0)) *
         1e-9;
}

struct Bench {
  std::string name;
  TrainSpec spec;
  ResolvedSpec resolved;
  double flops = 0, tokens = 0;  // over the timed steps
  double linear_flops = 0;       // the linear layers' forward products alone, over the steps
  bool every_row = false;        // a token task reading every row (the text model)
};

TrainSpec bench_spec(int d, int layers, int steps, const std::string& pe) {
  TrainSpec spec;  // the defaults but the width, depth and encoding: length task, l_train 10
  spec.steps = steps;
  spec.pe = pe;
  spec.d_model = d;
  spec.d_ff = 4 * d;
  spec.n_layer = layers;
  spec.optimizer.warmup_steps = std::min(spec.optimizer.warmup_steps, steps);
  return spec;
}

// The text model of bench/text_throughput.py: a character-level language model's shape (markov,
// 76 symbols, d_model 128, 4 layers, d_ff 512, RoPE, batches of 32 windows of 128 tokens), where
// attention over 129-token windows is a share of the work the short tasks never have.
TrainSpec text_spec(int steps) {
  TrainSpec spec = bench_spec(128, 4, steps, "rope");
  spec.task = "markov";
  spec.token.n_symbols = 76;
  spec.l_train = spec.l_train_min = spec.l_test = 128;
  spec.batch_size = 32;
  return spec;
}

Bench make_bench(const std::string& name, const TrainSpec& spec, bool every_row = false) {
  Bench b{name, spec, resolve(spec), 0, 0, 0, every_row};
  Rng rng = Rng::stream(b.spec.seed, 1);  // the exact batches train() will draw (same stream)
  for (int i = 0; i < b.spec.steps; ++i) {
    const ResolvedSpec& r = b.resolved;
    const Batch batch = is_token_task(r.task)
                            ? token_train_batch(r.task, b.spec.token, r.chain.get(), b.spec.l_train,
                                                b.spec.batch_size, rng, r.train_lengths.lo)
                            : sample_train_batch(r.task, b.spec.l_train, b.spec.batch_size, rng,
                                                 r.train_lengths.lo);
    b.flops += 3 * forward_flops(b.resolved.model, token_counts(batch), every_row);
    b.linear_flops += forward_flops(b.resolved.model, token_counts(batch), every_row, false);
    b.tokens += batch.n_tokens();
  }
  return b;
}

// Best of 3 training passes, seconds.
double train_seconds(const Bench& b) {
  Transformer<float> model(b.resolved.model);
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    model.init(b.spec.seed);
    const double start = thread_cpu_seconds();
    train(model, {{&b.spec, &b.resolved, {}}});
    best = std::min(best, cpu_seconds_since(start));
  }
  return best;
}

// One more training pass with every operation timed, after an untimed one on the same model (as
// the best pass is: a fresh model's first pass also pays for touching its buffers' pages, which
// the text model's few steps would show as host work): per operation its calls and time per step
// and its share of the step; the rest is the host's own work (batch sampling, packing, the
// optimizer's bookkeeping, memory helpers). The linear layers' rows also give their products'
// GFLOP/s (backward: dX and dW, twice the forward's FLOPs), and the last line the step's ceiling:
// its % of the peak were every other operation and the host's work free.
void print_op_breakdown(const Bench& b, double best_seconds, double peak) {
  Model<TimedBackend<CpuBackend<float>>> model(b.resolved.model);
  model.init(b.spec.seed);
  train(model, {{&b.spec, &b.resolved, {}}});  // untimed: the pages touched, as for the best pass
  model.init(b.spec.seed);
  op_tallies().clear();
  const double seconds = train(model, {{&b.spec, &b.resolved, {}}})[0].seconds;
  std::vector<std::pair<std::string, OpTally>> ops(op_tallies().begin(), op_tallies().end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& x, const auto& y) { return x.second.seconds > y.second.seconds; });
  const double steps = b.spec.steps;
  fmt::print(
      "  where a step of the {} model goes ({}; one more pass with every operation timed: {:.2f} "
      "s, {:+.1f} % against the best pass):\n",
      b.name, kernel_name(cpu::gemm_kernel()), seconds, 100 * (seconds / best_seconds - 1));
  fmt::print("    {:<22} {:>10} {:>12} {:>8} {:>9} {:>7}\n", "operation", "calls/step", "us/step",
             "share", "GFLOP/s", "% peak");
  double timed = 0, linear_seconds = 0;
  for (const auto& [name, t] : ops) {
    timed += t.seconds;
    const double flops = name == "linear_forward"    ? b.linear_flops
                         : name == "linear_backward" ? 2 * b.linear_flops
                                                     : 0;
    linear_seconds += flops > 0 ? t.seconds : 0;
    const double gflops = flops / t.seconds * 1e-9;
    fmt::print("    {:<22} {:>10.0f} {:>12.1f} {:>7.1f}% {:>9} {:>7}\n", name, t.calls / steps,
               1e6 * t.seconds / steps, 100 * t.seconds / seconds,
               flops > 0 ? fmt::format("{:.1f}", gflops) : "",
               flops > 0 ? fmt::format("{:.1f}%", 100 * gflops / peak) : "");
  }
  fmt::print("    {:<22} {:>10} {:>12.1f} {:>7.1f}%\n", "the rest (host work)", "",
             1e6 * (seconds - timed) / steps, 100 * (seconds - timed) / seconds);
  const double ceiling = b.flops / linear_seconds * 1e-9;
  fmt::print(
      "    ceiling: were all but the linear layers free, a step would run at {:.1f} GFLOP/s = "
      "{:.1f}% of the peak\n",
      ceiling, 100 * ceiling / peak);
}

// The inference forward at one test length: the evaluator's own path (evaluate(), sets drawn as a
// run's are), `sequences` sequences; best of 3. Returns {tokens/s, GFLOP/s}.
std::pair<double, double> eval_speed(const Bench& b, int length, int sequences) {
  Transformer<float> model(b.resolved.model);
  model.init(b.spec.seed);
  const EvalJob job = scalar_job(b.resolved.task, &b.resolved.reparam, {length}, sequences, 7);
  const Batch set = job_eval_set(job, length, kNoDepth);  // the set evaluate() draws
  const double flops = forward_flops(b.resolved.model, token_counts(set));
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    const double start = thread_cpu_seconds();
    evaluate(model, {job});
    best = std::min(best, cpu_seconds_since(start));
  }
  return {set.n_tokens() / best, flops / best * 1e-9};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  CLI::App app{
      "Training and evaluation speed on one core, the float linear layers on Eigen and on "
      "OpenBLAS side by side, against the core's 512x512 sgemm peak. Prints figures; never fails "
      "on time.",
      "lenlab_bench"};
  add_steps_argument(app, steps, "Training steps per pass of the default model (best of 3 passes)");
  std::string pe = "nope";
  app.add_option("--pe", pe,
                 "Positional encoding of the benchmarked models: " +
                     join_choices(positional_encoding_names()))
      ->capture_default_str();
  int max_eval_length = 4096;
  add_setting(app, "--max-eval-length", max_eval_length,
              "Longest test length of the evaluation benchmark (64, 128, ... up to it; 0: none)")
      ->check(int_range(0, 1 << 16))
      ->capture_default_str();
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);

  std::vector<Bench> benches;
  try {
    // The bigger models' steps are scaled so a pass takes about as long as the default model's.
    benches.push_back(make_bench("default", bench_spec(64, 2, steps, pe)));
    benches.push_back(make_bench("d_model 128", bench_spec(128, 4, std::max(1, steps / 8), pe)));
    benches.push_back(make_bench("d_model 256", bench_spec(256, 4, std::max(1, steps / 32), pe)));
    benches.push_back(make_bench("text, windows 128", text_spec(std::max(2, steps / 30)), true));
  } catch (const UsageError& e) {
    std::cerr << "lenlab_bench: error: " << e.what() << "\n";
    return 2;
  }
  const GemmKernel automatic = cpu::gemm_kernel();
  std::vector<GemmKernel> kernels = {GemmKernel::kEigen};
  if (cpu::openblas_available()) kernels.push_back(GemmKernel::kOpenBlas);

  double peak = 0;
  std::string peak_line;
  for (const GemmKernel k : kernels) {
    const double p = sgemm_peak(k);
    peak_line += fmt::format("{}{} {:.1f}", peak_line.empty() ? "" : ", ", kernel_name(k), p);
    peak = std::max(peak, p);
  }
  fmt::print("lenlab training benchmark (1 thread, pe {}, batch {}, lengths 1..{})\n", pe,
             benches[0].spec.batch_size, benches[0].spec.l_train);
  fmt::print("  float products: {}\n", cpu::gemm_kernel_description());
  fmt::print("  512x512 sgemm on this core (GFLOP/s, best of 3): {}; the peak below: {:.1f}\n",
             peak_line, peak);
  fmt::print("  {:<30} {:<9} {:>9} {:>10} {:>8} {:>7} {:>9}\n", "model", "kernel", "steps/s",
             "tokens/s", "GFLOP/s", "% peak", "speed-up");
  for (const Bench& b : benches) {
    const ModelConfig& c = b.resolved.model;
    double first = 0;
    for (const GemmKernel k : kernels) {
      cpu::set_gemm_kernel(k);
      const double s = train_seconds(b);
      if (first == 0) first = s;
      const double gflops = b.flops / s * 1e-9;
      fmt::print("  {:<30} {:<9} {:9.1f} {:10.0f} {:8.2f} {:6.1f}% {:8.2f}x\n",
                 k == kernels.front()
                     ? fmt::format("{} ({} x d{}, d_ff {})", b.name, c.n_layer, c.d_model, c.d_ff)
                     : "",
                 kernel_name(k), b.spec.steps / s, b.tokens / s, gflops, 100 * gflops / peak,
                 first / s);
    }
  }
  fmt::print(
      "  (speed-up: against Eigen, in this run; {} steps of the default model, {} and {} of "
      "the bigger ones, {} of the text model (pe rope whatever --pe), best of 3 passes each)\n",
      benches[0].spec.steps, benches[1].spec.steps, benches[2].spec.steps, benches[3].spec.steps);

  cpu::set_gemm_kernel(automatic);
  print_op_breakdown(benches[0], train_seconds(benches[0]), peak);
  print_op_breakdown(benches[3], train_seconds(benches[3]), peak);
  bench::print_attention_table(peak);

  if (max_eval_length >= 64) {
    fmt::print(
        "  evaluation (inference forward of the default model, evaluate() as a run calls it, "
        "~16384 tokens per length, best of 3):\n");
    fmt::print("    {:>7} {:<9} {:>11} {:>8} {:>7} {:>9}\n", "length", "kernel", "tokens/s",
               "GFLOP/s", "% peak", "speed-up");
    for (int L = 64; L <= max_eval_length; L *= 2) {
      const int sequences = std::max(2, 16384 / (L + 2));
      double first = 0;
      for (const GemmKernel k : kernels) {
        cpu::set_gemm_kernel(k);
        const auto [tokens_s, gflops] = eval_speed(benches[0], L, sequences);
        if (first == 0) first = tokens_s;
        fmt::print("    {:>7} {:<9} {:11.0f} {:8.2f} {:6.1f}% {:8.2f}x\n",
                   k == kernels.front() ? std::to_string(L) : "", kernel_name(k), tokens_s, gflops,
                   100 * gflops / peak, tokens_s / first);
      }
    }
    cpu::set_gemm_kernel(automatic);
  }
  return 0;
}
