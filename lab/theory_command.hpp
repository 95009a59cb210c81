#pragma once
// `lenlab theory`: the linear-attention theory of the paper's Appendix B.1 next to the measured
// error of trained runs (docs/theory.md). A self-contained subcommand, wired into lab/cli.cpp with
//   TheoryCommand theory(app);                          // after the other subcommands
//   if (theory.parsed()) return theory.run(out);        // first thing after app.parse
// UsageError from run() is caught and printed like every other usage error.
#include <iosfwd>
#include <string>

#include "theory/theory_report.hpp"

namespace CLI {
class App;
}

namespace lenlab {

class TheoryCommand {
 public:
  // Adds the `theory` subcommand and its flags to app; the flags write into this object, so it
  // must outlive app.parse() (it is neither copyable nor movable).
  explicit TheoryCommand(CLI::App& app);
  TheoryCommand(const TheoryCommand&) = delete;
  TheoryCommand& operator=(const TheoryCommand&) = delete;

  // After app.parse(): whether the command line chose `theory`.
  bool parsed() const;

  // Computes the report, prints the table and a summary to out, writes --out when given.
  // Throws UsageError on bad input, before anything is written. Returns 0.
  int run(std::ostream& out) const;

 private:
  CLI::App* command_ = nullptr;
  TheoryOptions options_;
  std::string out_file_;
};

// The printed table and summary of a report (what run() writes to out).
std::string format_theory_report(const TheoryReport& report);

}  // namespace lenlab
