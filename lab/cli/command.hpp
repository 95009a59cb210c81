#pragma once
// One subcommand of `lenlab`: it adds itself and its flags to the program's CLI11 app when it is
// made (its flags write into the object, so it must outlive app.parse()), and runs when the
// command line chose it. lab/cli/cli.cpp holds the list; each command has a file of its own.
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace lenlab {

// What a command gets from the program beyond its flags.
struct CommandLine {
  std::ostream& out;  // results meant for the reader (a dry run's plan, theory's table)
  std::ostream& err;  // progress, summaries and errors
  bool err_is_tty = false;
  std::string text;     // the whole command line, recorded in manifests
  std::string program;  // argv[0] made absolute (what a SLURM script calls)
};

class Command {
 public:
  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  virtual ~Command() = default;

  // After app.parse(): whether the command line chose this command.
  bool parsed() const;
  std::string name() const;

  // Runs the chosen command; returns the exit status (lab/run/run_train.hpp's ExitCode). Throws
  // UsageError on bad input, which lenlab_main prints as one line and turns into status 2.
  virtual int run(const CommandLine& line) = 0;

 protected:
  CLI::App* command_ = nullptr;  // set by the derived constructor
};

}  // namespace lenlab
