#pragma once
// Finding and running an external program (gnuplot) without a shell.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lenlab {

// The executable `program` names: a path when it contains a '/', else the first match in PATH;
// nullopt when there is none.
std::optional<std::filesystem::path> find_program(const std::string& program);

// Runs `program args...` in the folder `dir`, stdin and stdout on /dev/null; returns its wait
// status and everything it wrote to stderr. A program that cannot be started is a UsageError.
std::pair<int, std::string> run_program_in(const std::filesystem::path& program,
                                           const std::filesystem::path& dir,
                                           const std::vector<std::string>& args);

}  // namespace lenlab
