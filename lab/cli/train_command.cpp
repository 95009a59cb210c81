#include "lab/cli/train_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/cli/run_flags.hpp"

namespace lenlab {

namespace {

void add_train_options(CLI::App& cmd, TrainSpec& s, RunOptions& run) {
  cmd.option_defaults()->always_capture_default();
  add_spec_options(cmd, s);
  cmd.add_option("--out", run.out,
                 "Folder to write manifest.json, results.csv, loss.csv and "
                 "model.safetensors into")
      ->required();
  cmd.add_flag("--overwrite", run.overwrite, "Replace a run already in --out");
  cmd.add_option("--save-init", run.save_init,
                 "Also write the weights before the first step to this file (safetensors), for "
                 "training them elsewhere (tools/torch_reference)");
  cmd.add_option("--save-batches", run.save_batches,
                 "Also write every training step's batch to this file (JSON Lines: tokens, "
                 "positions, readouts, targets, loss weights), for training on them elsewhere");
  add_device_option(cmd, run.device);
  add_budget_options(cmd, run.budget);
}

}  // namespace

TrainCommand::TrainCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "train", "Train one model, evaluate it at every length 1..l-test, write the results");
  add_train_options(*command_, spec_, run_);
  command_->footer(
      "Example:\n  lenlab train --task length --pe nope --reparam invsqrt --l-train 10 --l-test 50 "
      "--steps 2000 --seed 1 --out runs/x\n"
      "Exit status: 0 done, 1 the machine failed (e.g. a GPU error), 2 bad input (nothing "
      "written), 3 training diverged (recorded in the manifest).");
}

int TrainCommand::run(const CommandLine& line) {
  // --lengths without --l-test: test up to the longest of them.
  if (!spec_.lengths.empty() && command_->count("--l-test") == 0)
    spec_.l_test = test_lengths(spec_).back();
  run_.command_line = line.text;
  run_.log = &line.err;
  run_.log_is_tty = line.err_is_tty;
  return run_train(spec_, run_);
}

}  // namespace lenlab
