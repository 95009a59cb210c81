#include "lab/cli/experiment_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/cli/run_flags.hpp"

namespace lenlab {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Options shared by `reproduce` and `run CONFIG`.
void add_experiment_options(CLI::App& cmd, ExperimentOptions& o, std::string& figures) {
  cmd.option_defaults()->always_capture_default();
  cmd.add_option("--out", o.out,
                 "Folder for the runs, figures, CSVs and report.md (required unless --dry-run)");
  cmd.add_option("--figures", figures, "Comma-separated figure names (default: all in the config)");
  add_setting(cmd, "--seeds", o.n_seeds, "Seeds 1..N for every line (default: the config's seeds)")
      ->check(int_range(1, INT32_MAX));
  add_setting(cmd, "--seeds-until-decided", o.seeds_until_decided,
              "After the seeds, add seeds to each comparison (a figure with a baseline) whose "
              "verdict is undecided (a method with no detectable difference, or not judged for "
              "want of a pair: no seed in common with the baseline, or none where both runs fit "
              "their training range): the figure's lines only, on the next "
              "seeds (first to the fewest that can decide, then 2 a round), judging every "
              "comparison again after each round, until each is decided or runs MAX seeds. "
              "Overrides the config's seeds_until_decided (default: that key, else none); "
              "--dry-run says the most runs it may add")
      ->type_name("MAX")
      ->check(int_range(1, kMaxSeedsUntilDecided));
  add_setting(cmd, "--jobs", o.jobs,
              "Runs trained side by side on the CPU, or groups of runs on the GPU (default: one "
              "per core)")
      ->check(int_range(1, thread_limit(), " (4 per core of this machine)"));
  add_device_option(cmd, o.device);
  add_budget_options(cmd, o.budget);
  cmd.add_option("--emit-slurm", o.emit_slurm,
                 "Write a SLURM job-array script into this folder instead of training (one array "
                 "task per run); draw the figures afterwards with lenlab plot");
  cmd.add_flag("--slurm", o.slurm,
               "Train on a Slurm cluster: write the job array into --out's slurm/ folder, submit "
               "it with sbatch, watch it to the end and draw the figures; run it again after an "
               "interruption or a failed task to go on");
  cmd.add_option("--sbatch-arg", o.sbatch_args,
                 "With --slurm: one more sbatch option, e.g. --sbatch-arg=--partition=gpu "
                 "(repeatable; overrides the script's --mem and --time)")
      ->allow_extra_args(false);
  cmd.add_option("--slurm-poll", o.slurm_poll_seconds,
                 "With --slurm: seconds between two looks at the queue (squeue)");
  cmd.add_option("--gnuplot", o.plot.gnuplot, "The gnuplot program that draws the figures");
  cmd.add_flag("--dry-run", o.dry_run,
               "Print the runs and how long they would take on this machine (runs already "
               "finished in --out left out); train nothing, write nothing");
}

}  // namespace

ExperimentCommand::ExperimentCommand(CLI::App& app, Kind kind) {
  options_.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (kind == Kind::kReproduce) {
    command_ = app.add_subcommand(
        "reproduce",
        "Reproduce the paper's synthetic figures (configs/paper.toml, built in): train "
        "every run, draw the figures, write report.md");
    add_experiment_options(*command_, options_, figures_);
    command_->add_option("--config", config_path_,
                         "Use this experiment config instead of the built-in paper one");
    command_->footer(
        "Examples:\n  lenlab reproduce --out figures/\n"
        "  lenlab reproduce --figures 1b,1c --seeds 5 --out figures/\n"
        "A killed reproduce loses only the runs in flight: run it again to finish the rest.");
    return;
  }
  command_ = app.add_subcommand(
      "run",
      "Run an experiment config (a copy of configs/paper.toml, edited): train, draw, report");
  command_->add_option("config", config_path_, "The experiment config (TOML)")->required();
  add_experiment_options(*command_, options_, figures_);
  add_setting(*command_, "--run-index", options_.run_index,
              "Train only this run of the plan (0-based; what a SLURM array task does)")
      ->check(int_range(0, INT32_MAX));
}

int ExperimentCommand::run(const CommandLine& line) {
  if (config_path_.empty()) {
    options_.config_text = paper_config_text();
    options_.config_source = "configs/paper.toml (built in)";
  } else {
    options_.config_text = read_text_file(config_path_);
    options_.config_source = config_path_;
  }
  options_.figures = split_commas(figures_);
  if (!figures_.empty() && options_.figures.empty())  // "," would select every figure
    throw UsageError(
        fmt::format("--figures '{}': no figure names; give names separated by commas, "
                    "e.g. 1b,1c, or leave --figures out for every figure",
                    figures_));
  options_.log = &line.err;
  options_.print = &line.out;
  options_.log_is_tty = line.err_is_tty;
  options_.lenlab_path = line.program;
  return run_experiment(options_);
}

}  // namespace lenlab
