#include "lab/cli/eval_command.hpp"

#include <CLI/CLI.hpp>
#include <climits>

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
  command_->footer(
      "Example:\n  lenlab eval runs/x --lengths 1..50,64,128,256,512,1024 --samples 100 --out "
      "runs/x-long --predictions");
}

int EvalCommand::run(const CommandLine& line) {
  options_.has_eval_seed = command_->count("--eval-seed") > 0;
  options_.command_line = line.text;
  options_.log = &line.err;
  options_.log_is_tty = line.err_is_tty;
  return run_eval(options_);
}

}  // namespace lenlab
