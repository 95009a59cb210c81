#pragma once
// `lenlab eval`: a trained run evaluated again at any test lengths (lab/run/eval_run.hpp), or with
// --stream a text run reading one long text (lab/run/stream_run.hpp).
#include "lab/cli/command.hpp"
#include "lab/run/eval_run.hpp"
#include "lab/run/stream_run.hpp"

namespace lenlab {

class EvalCommand : public Command {
 public:
  explicit EvalCommand(CLI::App& app);
  int run(const CommandLine& line) override;

 private:
  EvalOptions options_;
  std::string stream_;  // --stream's source; "" = by lengths
  int64_t stream_tokens_ = 0;
  int stream_chunk_ = kDefaultStreamChunk;
};

}  // namespace lenlab
