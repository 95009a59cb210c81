#include "lab/cli/report_commands.hpp"

#include <CLI/CLI.hpp>

#include "lab/experiment/experiment.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

PlotCommand::PlotCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "plot", "Redraw the figures, CSVs and report.md of an experiment folder from its runs");
  command_->add_option("dir", dir_, "The experiment folder (--out of reproduce or run)")
      ->required();
  command_->add_option("--gnuplot", plot_.gnuplot, "The gnuplot program")->capture_default_str();
}

// A gnuplot that fails is refused before anything is written (a missing one is only told, after
// the CSVs and scripts are written, with how to draw them later).
int PlotCommand::run(const CommandLine& line) {
  check_gnuplot(plot_);
  return plot_experiment(dir_, plot_, &line.err);
}

RepresentationCommand::RepresentationCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "representation",
      "Paper 004's claim on your runs: does the attention outputs' distance from l_train predict "
      "the excess loss? Reads `lenlab eval --representation-stats` folders; writes points.csv, "
      "report.md (correlations) and a figure per encoding");
  command_->add_option("dirs", options_.dirs, "The evaluation folders")->required();
  command_->add_option("--out", options_.out, "Folder to write the report into")->required();
  command_->add_option("--gnuplot", options_.plot.gnuplot, "The gnuplot program")
      ->capture_default_str();
  command_->footer(
      "Example:\n"
      "  for r in runs/*/; do\n"
      "    lenlab eval $r --representation-stats --out evals/$(basename $r)\n"
      "  done\n"
      "  lenlab representation evals/* --out representation/");
}

int RepresentationCommand::run(const CommandLine& line) {
  options_.log = &line.err;
  check_gnuplot(options_.plot);  // as PlotCommand::run
  return run_representation_report(options_);
}

}  // namespace lenlab
