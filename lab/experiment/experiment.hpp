#pragma once
// An experiment folder, as `lenlab reproduce` / `lenlab run CONFIG` write it:
//   config.toml        the experiment config the runs came from (the paper's, or the user's)
//   selection.json     which figures and seeds were asked for, and the seeds added by
//                      --seeds-until-decided (what `lenlab plot` redraws;
//                      lab/experiment/selection.hpp)
//   runs/<run id>/     one folder per training run (see lab/run/run_train.hpp)
//   fig<NAME>.csv      tidy results of the figure: one row per run × length
//   fig<NAME>.png/.svg the figure (gnuplot), with fig<NAME>.dat/.gp to redraw it by hand
//   results.csv        every figure's rows together
//   report.md          the paper's claims about these figures against the measured numbers
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "cost/budget.hpp"
#include "cost/time_model.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

const char* paper_config_text();  // configs/paper.toml, compiled in

struct ExperimentOptions {
  std::filesystem::path out;
  std::string config_text;           // TOML
  std::string config_source;         // for messages, e.g. "configs/paper.toml (built in)"
  std::vector<std::string> figures;  // empty = all
  int n_seeds = 0;                   // > 0: seeds 1..n instead of the config's
  // --seeds-until-decided MAX (lab/experiment/seeds_until_decided.hpp): > 0 overrides the config's
  // seeds_until_decided; 0: the config's, if it has one.
  int seeds_until_decided = 0;
  int jobs = 1;
  std::string device = "auto";  // --device (lab/run/device.hpp)
  Budget budget;                // --max-memory, --max-time (cost/budget.hpp)
  int run_index = -1;  // >= 0: train only that planned run (a SLURM array task), no figures
  std::filesystem::path emit_slurm;  // non-empty: write a SLURM job array there, train nothing
  // --slurm: write that job array into OUT/slurm, submit it and watch it to the end
  // (lab/experiment/slurm_submit.hpp); sbatch_args go to sbatch before the script, e.g.
  // "--partition=gpu", and squeue is asked every slurm_poll_seconds.
  bool slurm = false;
  std::vector<std::string> sbatch_args;
  double slurm_poll_seconds = 5;
  bool dry_run = false;  // print the plan and its predicted time (cost/dry_run.hpp), train nothing
  std::ostream* print = nullptr;  // where the dry run's report goes (stdout)
  CpuSpeed cpu_speed{};  // dry run: lenlab's rates on this core, every shape; 0: measure them
  // dry run's FLOP floor: this core's 512×512 sgemm FLOP/s (measure_sgemm_peak); 0: measure it
  double sgemm_peak = 0;
  PlotOptions plot;
  std::ostream* log = nullptr;
  bool log_is_tty = false;
  std::string lenlab_path = "lenlab";   // this program, for the SLURM script
  std::function<void(double)> on_tick;  // lab/experiment/sweep.hpp's SweepOptions::on_tick
};

// Plans the runs, trains the missing ones, then draws the figures and the report (with dry_run:
// plans them and prints what training them would take; --out may then be empty).
int run_experiment(const ExperimentOptions& options);

// Redraws figures, CSVs and report.md from an experiment folder's runs (`lenlab plot DIR`).
int plot_experiment(const std::filesystem::path& dir, const PlotOptions& plot, std::ostream* log);

}  // namespace lenlab
