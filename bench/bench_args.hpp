#pragma once
// The benchmarks' command lines, parsed like lenlab's: --help prints the usage, a bad argument is
// one line `<program>: error: ...` and exit status 2.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "lab/cli/cli_options.hpp"

namespace lenlab {

// The benchmarks' one positional argument: how many steps to time (1..10^6).
inline void add_steps_argument(CLI::App& app, int& steps, const std::string& help) {
  add_setting(app, "steps", steps, help)->check(int_range(1, 1000000))->capture_default_str();
}

// Parses argv into app. Returns -1 to go on, else the exit status to return (0 after --help).
inline int parse_bench_args(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << " (see " << app.get_name()
              << " --help)\n";
    return 2;
  }
  return -1;
}

}  // namespace lenlab
