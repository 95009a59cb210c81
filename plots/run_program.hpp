#pragma once
// Finding and running an external program (gnuplot, Slurm's sbatch and squeue) without a shell.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lenlab {

// The executable `program` names: a path when it contains a '/', else the first match in PATH;
// nullopt when there is none.
std::optional<std::filesystem::path> find_program(const std::string& program);

// What a finished program left: its wait status (waitpid's) and everything it wrote.
struct ProgramOutput {
  int status = 0;
  std::string out, err;  // its stdout and stderr
};

// Runs `program args...` in the folder `dir`, stdin on /dev/null, and waits for it. A program that
// cannot be started is a UsageError.
ProgramOutput run_program_capture(const std::filesystem::path& program,
                                  const std::filesystem::path& dir,
                                  const std::vector<std::string>& args);

// The same, for programs whose stdout means nothing (gnuplot): its wait status and its stderr.
std::pair<int, std::string> run_program_in(const std::filesystem::path& program,
                                           const std::filesystem::path& dir,
                                           const std::vector<std::string>& args);

}  // namespace lenlab
