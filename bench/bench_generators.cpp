// What drawing the token tasks' data costs: for every token task, the seconds to draw the training
// batches of a run (batches of --batch sequences, lengths uniform in 1..40) and its test sets
// (every length 41..500, --samples sequences each), the Chomsky-hierarchy study's protocol, on one
// core. Set against a training step of the study's model (configs/chomsky.toml: about 0.4 s a step
// on a laptop core) to show that the generators cost little. Prints figures; never passes or fails.
//   usage: lenlab_generators_bench [steps (default 200)] [--batch 128] [--samples 64]
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "bench/bench_args.hpp"
#include "core/error.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

using namespace lenlab;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 200, batch = 128, samples = 64;
  CLI::App app{"Times drawing every token task's training batches and test sets."};
  add_steps_argument(app, steps, "Training batches to draw per task");
  add_setting(app, "--batch", batch, "Sequences per training batch")->check(int_range(1, 100000));
  add_setting(app, "--samples", samples, "Test sequences per length")->check(int_range(1, 100000));
  if (const int status = parse_bench_args(app, argc, argv); status >= 0) return status;
  try {
    constexpr int kTrain = 40, kTestFirst = 41, kTestLast = 500;
    std::cout << fmt::format(
        "lenlab_generators_bench: {} training batches of {} (lengths 1..{}), test sets of {} "
        "sequences at every length {}..{}\n",
        steps, batch, kTrain, samples, kTestFirst, kTestLast);
    std::cout << fmt::format("{:<28} {:>12} {:>14} {:>12} {:>14}\n", "task", "train s",
                             "ms per batch", "test s", "Mtokens/s");
    for (const std::string& name : task_names()) {
      const TaskKind task = parse_task(name);
      if (!is_token_task(task) || task == TaskKind::kRecall) continue;  // recall: L <= n_symbols
      if (task == TaskKind::kText) {  // the default corpus, where the build wrote one
        try {
          corpus_path("");
        } catch (const UsageError& e) {
          std::cout << fmt::format("{:<28} skipped: {}\n", name, e.what());
          continue;
        }
      }
      TokenTaskSettings settings;
      settings.n_symbols = task == TaskKind::kBucketSort ? 5 : 2;
      std::unique_ptr<MarkovChain> chain;
      if (task == TaskKind::kMarkov)
        chain = std::make_unique<MarkovChain>(settings.n_symbols, settings.markov_order,
                                              settings.markov_concentration, settings.markov_seed);
      Rng rng(1);
      double tokens = 0;
      auto start = std::chrono::steady_clock::now();
      for (int s = 0; s < steps; ++s)
        tokens += token_train_batch(task, settings, chain.get(), kTrain, batch, rng).n_tokens();
      const double train_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      for (int l = std::max(kTestFirst, shortest_length(task, settings)); l <= kTestLast; ++l)
        tokens += token_eval_batch(task, settings, chain.get(), l, samples, 20240601).n_tokens();
      const double test_s = seconds_since(start);
      std::cout << fmt::format("{:<28} {:>12.3f} {:>14.3f} {:>12.3f} {:>14.1f}\n", name, train_s,
                               1e3 * train_s / steps, test_s, tokens / (train_s + test_s) / 1e6);
    }
  } catch (const UsageError& e) {
    std::cerr << "lenlab_generators_bench: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
