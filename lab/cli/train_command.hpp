#pragma once
// `lenlab train`: one model trained, evaluated at every test length, written into --out
// (lab/run/run_train.hpp).
#include "lab/cli/command.hpp"
#include "lab/run/run_train.hpp"

namespace lenlab {

class TrainCommand : public Command {
 public:
  explicit TrainCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  TrainSpec spec_;
  RunOptions run_;
};

}  // namespace lenlab
