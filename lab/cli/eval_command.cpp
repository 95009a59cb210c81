#include "lab/cli/eval_command.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <climits>

#include "core/error.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/cli/run_flags.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace {

void add_eval_options(CLI::App& cmd, EvalOptions& o) {
  cmd.add_option("run", o.run_dir, "A trained run's folder (lenlab train's --out)")->required();
  cmd.add_option("--lengths", o.lengths,
                 "Test lengths, e.g. 1..50,64,128,256,512,1024 or 64..1024:64 (default: the "
                 "run's own)");
  add_setting(cmd, "--samples", o.samples,
              "Test sequences per length (all 2^l, exactly weighted, when that is fewer; "
              "default: the run's --eval-samples)")
      ->check(int_range(1, kMaxLength));
  add_setting(cmd, "--eval-seed", o.eval_seed,
              "Seed of the test sequences (default: the run's, so that results compare)");
  cmd.add_option("--depths", o.depths,
                 "passkey: the key's depths, in [0, 1] or 'random' (default: the run's)");
  cmd.add_option("--out", o.out, "Folder to write results.csv, eval.json and predictions.csv into")
      ->required();
  cmd.add_flag("--predictions", o.predictions,
               "Also write predictions.csv: every test sequence's input, target and output");
  add_setting(cmd, "--threads", o.threads, "CPU threads (default: the run's)")
      ->check(int_range(1, thread_limit(), " (4 per core of this machine)"));
  add_test_time_options(cmd, o.attention);
  CLI::Option* representation = cmd.add_flag(
      "--representation-stats", o.representation_stats,
      "Also write representation.csv: per length and layer, how far the attention outputs lie "
      "from those at l_train (sliced Wasserstein-1, JS distance, KL divergence; paper 004's "
      "measurement, docs/methods.md)");
  add_setting(cmd, "--representation-projections", o.representation_projections,
              "With --representation-stats: the random directions the distances are averaged over")
      ->check(int_range(1, kMaxRepresentationProjections))
      ->needs(representation);
  cmd.add_flag("--overwrite", o.overwrite, "Replace an evaluation already in --out");
  add_device_option(cmd, o.device);
  add_budget_options(cmd, o.budget);
}

}  // namespace

EvalCommand::EvalCommand(CLI::App& app) {
  command_ =
      app.add_subcommand("eval", "Evaluate a trained run at any test lengths, without retraining");
  add_eval_options(*command_, options_);
  CLI::App& cmd = *command_;
  CLI::Option* stream = cmd.add_option(
      "--stream", stream_,
      "A text run: read one long text in a single pass through the key-value cache and write "
      "stream.csv, the cross-entropy per chunk of positions (LM-Infinite's test): test, "
      "validation, training (a split of the run's corpus, its blocks in order), all (the whole "
      "corpus), or a file of the corpus's characters");
  add_setting(cmd, "--stream-tokens", stream_tokens_,
              "With --stream: characters to read at most (0: the whole text)")
      ->check(int_range(0, INT32_MAX - 1))
      ->needs(stream);
  add_setting(cmd, "--stream-chunk", stream_chunk_,
              "With --stream: positions per row of stream.csv")
      ->check(int_range(1, INT32_MAX))
      ->needs(stream);
  command_->footer(
      "Examples:\n  lenlab eval runs/x --lengths 1..50,64,128,256,512,1024 --samples 100 --out "
      "runs/x-long --predictions\n  lenlab eval runs/text-rope --stream test --n-local train "
      "--n-global 1 --distance-cap train --out runs/text-rope-stream");
}

int EvalCommand::run(const CommandLine& line) {
  if (command_->count("--stream") > 0) {
    for (const char* flag : {"--lengths", "--samples", "--eval-seed", "--depths", "--predictions",
                             "--representation-stats"})
      if (command_->count(flag) > 0)
        throw UsageError(fmt::format(
            "{} is for the evaluation by lengths; --stream reads one text and scores each of its "
            "positions: leave one of the two out",
            flag));
    StreamOptions s;
    s.run_dir = options_.run_dir;
    s.out = options_.out;
    s.source = stream_;
    s.max_tokens = stream_tokens_;
    s.chunk = stream_chunk_;
    s.overwrite = options_.overwrite;
    s.device = options_.device;
    s.threads = options_.threads;
    s.attention = options_.attention;
    s.budget = options_.budget;
    s.command_line = line.text;
    s.log = &line.err;
    return run_stream(s);
  }
  options_.has_eval_seed = command_->count("--eval-seed") > 0;
  options_.command_line = line.text;
  options_.log = &line.err;
  options_.log_is_tty = line.err_is_tty;
  return run_eval(options_);
}

}  // namespace lenlab
