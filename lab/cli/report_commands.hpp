#pragma once
// The commands that read finished work and write figures and reports, training nothing:
// `lenlab plot` (an experiment folder's figures, CSVs and report.md, redrawn from its runs) and
// `lenlab representation` (paper 004's claim on `lenlab eval --representation-stats` folders).
#include <filesystem>

#include "lab/cli/command.hpp"
#include "plots/gnuplot.hpp"
#include "report/representation_report.hpp"

namespace lenlab {

class PlotCommand : public Command {
 public:
  explicit PlotCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  std::string dir_;
  PlotOptions plot_;
};

class RepresentationCommand : public Command {
 public:
  explicit RepresentationCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  RepresentationReportOptions options_;
};

}  // namespace lenlab
