#pragma once
// `lenlab generate`: a trained run writing after a prompt (lab/run/generate_run.hpp).
#include "lab/cli/command.hpp"
#include "lab/run/generate_run.hpp"

namespace lenlab {

class GenerateCommand : public Command {
 public:
  explicit GenerateCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  GenerateOptions options_;
};

}  // namespace lenlab
