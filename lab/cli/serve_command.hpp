#pragma once
// `lenlab serve`: the live page for a class (docs/course/README.md).
#include <iosfwd>
#include <string>
#include <vector>

#include "lab/cli/command.hpp"
#include "lab/serve/server.hpp"

namespace lenlab {

class ServeCommand : public Command {
 public:
  explicit ServeCommand(CLI::App& app);
  // Binds, prints "lenlab serve: listening on URL [URL...]" to line.out (the addresses students
  // can type: lab/serve/interfaces.hpp's reachable_urls), and serves until the process is stopped
  // (Ctrl-C: runs in flight are trained again next time; finished ones stay). UsageError for a
  // port it cannot bind, bad limits, a bad --corpus, --allow-host or --allow-origin, before
  // anything is written.
  int run(const CommandLine& line) override;

 private:
  ServeOptions options_;
  std::vector<std::string> corpora_;  // --corpus NAME=FILE, checked by offered_corpora
  bool classroom_ = false;            // --classroom: codes on loopback too
};

}  // namespace lenlab
