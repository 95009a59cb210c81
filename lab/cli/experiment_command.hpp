#pragma once
// `lenlab reproduce` (the paper's figures, from the built-in configs/paper.toml or --config) and
// `lenlab run CONFIG` (any experiment config): plan the runs, train the missing ones, draw the
// figures, write report.md (lab/experiment/experiment.hpp). One class, two commands.
#include <string>

#include "lab/cli/command.hpp"
#include "lab/experiment/experiment.hpp"

namespace lenlab {

class ExperimentCommand : public Command {
 public:
  enum class Kind { kReproduce, kRun };
  ExperimentCommand(CLI::App& app, Kind kind);
  int run(const CommandLine& line) override;

 private:
  ExperimentOptions options_;
  std::string figures_, config_path_;
};

}  // namespace lenlab
