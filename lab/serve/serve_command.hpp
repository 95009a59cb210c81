#pragma once
// `lenlab serve`: the live page for a class (docs/course/README.md). Wired into lab/cli.cpp like
// `theory`:
//   ServeCommand serve(app);                           // after the other subcommands
//   if (serve.parsed()) return serve.run(out);         // first thing after app.parse
#include <iosfwd>

#include "lab/serve/server.hpp"

namespace CLI {
class App;
}

namespace lenlab {

class ServeCommand {
 public:
  explicit ServeCommand(CLI::App& app);
  ServeCommand(const ServeCommand&) = delete;
  ServeCommand& operator=(const ServeCommand&) = delete;

  bool parsed() const;
  // Binds, prints "lenlab serve: listening on http://HOST:PORT/" to out, and serves until the
  // process is stopped (Ctrl-C: runs in flight are trained again next time; finished ones stay).
  // UsageError for a port it cannot bind or bad limits, before anything is written.
  int run(std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
  ServeOptions options_;
};

}  // namespace lenlab
