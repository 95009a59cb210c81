// Running gnuplot (plots/gnuplot.hpp): whether it is there and works, and a figure's script run
// in its folder, with gnuplot's own error line when it fails.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "core/atomic_file.hpp"
#include "plots/gnuplot.hpp"
#include "plots/run_program.hpp"

namespace lenlab {
namespace fs = std::filesystem;

namespace {

// The line of gnuplot's error output that says what went wrong: gnuplot echoes the failing
// command and a caret first, then `"fig1a.gp" line 12: <message>`.
std::string error_line(const std::string& err) {
  std::string first;
  size_t start = 0;
  while (start < err.size()) {
    const size_t end = std::min(err.find('\n', start), err.size());
    std::string line = err.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.front() == '"' && line.find("\" line ") != std::string::npos) return line;
    if (first.empty()) first = line;
  }
  return first.empty() ? "no error message" : first;
}

}  // namespace

bool gnuplot_available(const PlotOptions& opt) {
  return find_program(opt.gnuplot).has_value();
}

bool check_gnuplot(const PlotOptions& opt) {
  const std::optional<fs::path> program = find_program(opt.gnuplot);
  if (!program) return false;
  // A scratch folder of this process's own; the probe draws both terminals the figures use.
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("lenlab-gnuplot-probe-{}", ::getpid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  write_file_atomic(dir / "probe.gp",
                    "set terminal pngcairo size 64,64\nset output 'probe.png'\nplot x\n"
                    "set terminal svg size 64,64\nset output 'probe.svg'\nreplot\nset output\n");
  const auto [status, err] = run_program_in(*program, dir, {"--default-settings", "probe.gp"});
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                  fs::file_size(dir / "probe.png", ec) > 0 &&
                  fs::file_size(dir / "probe.svg", ec) > 0;
  fs::remove_all(dir, ec);
  if (!ok)
    throw UsageError(fmt::format(
        "gnuplot ({}) fails on a test figure: {}; fix it, or point --gnuplot at one that works "
        "(the runs would train, but no figure could be drawn)",
        program->string(),
        WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                            : error_line(err)));
  return true;
}

std::string gnuplot_missing_message(const fs::path& dir) {
  return fmt::format(
      "gnuplot not found: wrote the figures' .dat and .gp files but no images; install it "
      "(sudo apt-get install gnuplot-nox) and redraw them with: lenlab plot {}",
      dir.string());
}

bool run_gnuplot_script(const fs::path& dir, const std::string& base, const PlotOptions& opt) {
  const fs::path png = dir / (base + ".png"), svg = dir / (base + ".svg");
  // Images of an earlier render would no longer match the .dat.
  std::error_code ec;
  fs::remove(png, ec);
  fs::remove(svg, ec);

  const std::optional<fs::path> program = find_program(opt.gnuplot);
  if (!program) return false;
  // --default-settings: a user's ~/.gnuplot must not restyle the figures.
  const auto [status, err] = run_program_in(*program, dir, {"--default-settings", base + ".gp"});
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const auto written = [](const fs::path& p) {
    std::error_code e;
    return fs::is_regular_file(p, e) && fs::file_size(p, e) > 0;
  };
  if (ok && written(png) && written(svg)) return true;
  fs::remove(png, ec);
  fs::remove(svg, ec);
  const std::string why =
      WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status)) : error_line(err);
  throw UsageError(fmt::format("gnuplot ({}) failed on {}: {}", program->string(),
                               (dir / (base + ".gp")).string(), why));
}

}  // namespace lenlab
