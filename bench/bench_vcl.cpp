// VCL's cost at one training length M (paper 004, Figure 5; docs/methods.md, 004-C6): training
// steps per second and peak memory of the plain loss, and of VCL with the prefix masked, detached
// or random at offset k = M/2, on the Markov language at the fixed length M (--l-train-min M).
// Each variant runs in a process of its own (fork), so its peak resident memory is its own.
// Prints figures; never passes or fails on time.
//   usage: lenlab_vcl_bench [steps (default 200)] [--length M (default 64)] [--pe PE]
#include <fmt/format.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <Eigen/Core>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_args.hpp"
#include "core/error.hpp"
#include "core/process_memory.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "train/run_settings.hpp"
#include "train/trainer.hpp"

using namespace lenlab;

namespace {

struct Variant {
  const char* name;
  int offset;  // 0: the plain loss
  const char* prefix;
};

struct Measured {
  double steps_per_second = 0;
  double peak_mib = 0;  // the process's peak resident set
};

// Trains the variant in this process (best of 3 passes) and measures it.
Measured measure(const TrainSpec& base, const Variant& v) {
  TrainSpec spec = base;
  spec.vcl.offset = v.offset;
  spec.vcl.prefix = v.prefix;
  const ResolvedSpec resolved = resolve(spec);
  Model<CpuBackend<float>> model(resolved.model);
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    model.init(spec.seed);
    best = std::min(best, train(model, {{&spec, &resolved, {}}})[0].seconds);
  }
  return {spec.steps / best, static_cast<double>(peak_resident_memory_bytes()) / (1 << 20)};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 200, length = 64;
  std::string pe = "rope";
  CLI::App app{
      "VCL's step time and peak memory at one training length M: the plain loss and VCL at "
      "offset M/2 with the prefix masked, detached or random. Prints figures; never fails on "
      "time.",
      "lenlab_vcl_bench"};
  add_steps_argument(app, steps, "Training steps per pass (best of 3 passes)");
  app.add_option("--length", length, "The training length M (Markov symbols per sequence)")
      ->capture_default_str();
  app.add_option("--pe", pe, "Positional encoding: " + join_choices(positional_encoding_names()))
      ->capture_default_str();
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);

  TrainSpec spec;  // the token tasks' model of configs/methods.toml at one length
  spec.task = "markov";
  spec.pe = pe;
  spec.l_train = spec.l_train_min = length;
  spec.l_test = length;
  spec.steps = steps;
  spec.batch_size = 32;
  spec.d_ff = 128;
  const int k = std::max(1, length / 2);
  const std::vector<Variant> variants = {{"plain loss", 0, "mask"},
                                         {"VCL mask", k, "mask"},
                                         {"VCL detach", k, "detach"},
                                         {"VCL random", k, "random"}};
  try {
    for (const Variant& v : variants) {
      TrainSpec s = spec;
      s.vcl = {v.offset, 0.0, v.prefix};
      resolve(s);  // every variant's settings, before any runs
    }
  } catch (const UsageError& e) {
    std::cerr << "lenlab_vcl_bench: error: " << e.what() << "\n";
    return 2;
  }

  fmt::print(
      "VCL at one training length (1 thread; markov, pe {}, M = {} symbols, offset k = {}, batch "
      "{}, {} steps, best of 3; each variant in its own process)\n",
      pe, length, k, spec.batch_size, steps);
  fmt::print("  {:<12} {:>10} {:>10} {:>12}\n", "variant", "steps/s", "vs plain", "peak MiB");
  double plain = 0;
  for (const Variant& v : variants) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {  // the child measures and reports through the pipe
      close(pipe_fd[0]);
      const Measured m = measure(spec, v);
      const std::string line = fmt::format("{} {}\n", m.steps_per_second, m.peak_mib);
      if (write(pipe_fd[1], line.data(), line.size()) < 0) _exit(1);
      _exit(0);
    }
    close(pipe_fd[1]);
    char buffer[128] = {};
    const ssize_t n = read(pipe_fd[0], buffer, sizeof buffer - 1);
    close(pipe_fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    Measured m;
    if (n <= 0 || std::sscanf(buffer, "%lf %lf", &m.steps_per_second, &m.peak_mib) != 2) {
      std::cerr << "lenlab_vcl_bench: the " << v.name << " measurement failed\n";
      return 1;
    }
    if (v.offset == 0) plain = m.steps_per_second;
    fmt::print("  {:<12} {:>10.1f} {:>9.2f}x {:>12.1f}\n", v.name, m.steps_per_second,
               m.steps_per_second / plain, m.peak_mib);
  }
  fmt::print(
      "  (detach skips the prefix's attention work in the backward; the forward and every "
      "activation are the same in all four)\n");
  return 0;
}
