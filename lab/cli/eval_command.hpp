#pragma once
// `lenlab eval`: a trained run evaluated again at any test lengths (lab/run/eval_run.hpp).
#include "lab/cli/command.hpp"
#include "lab/run/eval_run.hpp"

namespace lenlab {

class EvalCommand : public Command {
 public:
  explicit EvalCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  EvalOptions options_;
};

}  // namespace lenlab
