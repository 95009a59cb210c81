#pragma once
// `lenlab theory`: the linear-attention theory of the paper's Appendix B.1 next to the measured
// error of trained runs (docs/theory.md).
#include <iosfwd>
#include <string>

#include "lab/cli/command.hpp"
#include "theory/theory_report.hpp"

namespace lenlab {

class TheoryCommand : public Command {
 public:
  explicit TheoryCommand(CLI::App& app);

  // Computes the report, prints the table and a summary to line.out, writes --out when given.
  // Throws UsageError on bad input, before anything is written. Returns 0.
  int run(const CommandLine& line) override;

 private:
  TheoryOptions options_;
  std::string out_file_;
};

// The printed table and summary of a report (what run() writes to out).
std::string format_theory_report(const TheoryReport& report);

}  // namespace lenlab
