#pragma once
// `lenlab serve`: the live page for a class (docs/course/README.md).
#include <iosfwd>

#include "lab/cli/command.hpp"
#include "lab/serve/server.hpp"

namespace lenlab {

class ServeCommand : public Command {
 public:
  explicit ServeCommand(CLI::App& app);
  // Binds, prints "lenlab serve: listening on http://HOST:PORT/" to line.out, and serves until
  // the process is stopped (Ctrl-C: runs in flight are trained again next time; finished ones
  // stay). UsageError for a port it cannot bind or bad limits, before anything is written.
  int run(const CommandLine& line) override;

 private:
  ServeOptions options_;
};

}  // namespace lenlab
