// Every misuse of `lenlab` as one table: a row is a command line, the exit status it must end with
// (2: bad input, 1: the machine failed), a word its one-line error must contain, and the promise
// that the output folder holds nothing new afterwards. A new flag adds rows. Faults that need a
// setup of their own (a full disk, a killed writer, a figure that varies the seed) and the limits
// of the settings are in test_faults.cpp.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lab/run/device.hpp"
#include "tests/lab/misuse_table.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

const std::vector<Misuse>& table() {
  static const std::vector<Misuse> rows = [] {
    std::vector<Misuse> r = run_misuses();
    for (Misuse& m : sweep_misuses()) r.push_back(std::move(m));
    if (!Device::choose("auto").gpu())
      r.push_back({tiny_train({"--device", "cuda"}), 2, "--device cuda"});
    return r;
  }();
  return rows;
}

// A completed tiny run that "{parent}" rows fine-tune from (or try to write over), trained once.
fs::path parent_run(const fs::path& base) {
  static const fs::path parent = [&] {
    const fs::path p = base / "parent";
    std::vector<std::string> args = tiny_train({});
    for (std::string& a : args)
      if (a == "{out}") a = p.string();
    args.push_back("--overwrite");
    REQUIRE(run_cli(args).rc == 0);
    return p;
  }();
  return parent;
}

// A copy of the parent run in `dir` whose manifest says KEY = VALUE (JSON) for "KEY=VALUE": a
// manifest edited by hand, its settings read back by eval and --init-from.
fs::path edited_run(const fs::path& parent, const fs::path& dir, const std::string& edit) {
  const size_t eq = edit.find('=');
  const fs::path copy = dir / ("edited-" + edit.substr(0, eq));
  fs::copy(parent, copy, fs::copy_options::recursive);
  nlohmann::ordered_json manifest;
  std::ifstream(copy / "manifest.json") >> manifest;
  manifest["config"][edit.substr(0, eq)] = nlohmann::json::parse(edit.substr(eq + 1));
  std::ofstream(copy / "manifest.json") << manifest.dump(2);
  return copy;
}

// The row's arguments with its folders and configs filled in.
std::vector<std::string> fill(const Misuse& row, const fs::path& out, const fs::path& dir) {
  std::vector<std::string> args;
  for (std::string a : row.args) {
    if (a.rfind("{out}", 0) == 0) a = out.string() + a.substr(5);
    if (a.rfind("{dir}", 0) == 0) a = dir.string() + a.substr(5);
    if (a.rfind("{parent}", 0) == 0) a = parent_run(out.parent_path()).string() + a.substr(8);
    if (a.rfind("{edited:", 0) == 0)
      a = edited_run(parent_run(out.parent_path()), dir, a.substr(8, a.size() - 9)).string();
    if (a.rfind("{fifo:", 0) == 0) {
      const fs::path fifo = dir / a.substr(6, a.size() - 7);
      fs::remove(fifo);
      REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
      a = fifo.string();
    }
    if (a.rfind("{config:", 0) == 0) {
      const std::string name = a.substr(8, a.size() - 9);
      const fs::path file = dir / (name + ".toml");
      std::ofstream(file) << misuse_config_text(name);
      a = file.string();
    }
    args.push_back(a);
  }
  return args;
}

std::string joined(const std::vector<std::string>& args) {
  std::string s = "lenlab";
  for (const std::string& a : args) s += " " + a;
  return s;
}

}  // namespace

TEST_CASE("every misuse in the table: its exit status, one error line with its word, nothing new") {
  const fs::path base = run_dir("misuse");
  for (size_t i = 0; i < table().size(); ++i) {
    const Misuse& row = table()[i];
    const fs::path out = base / fmt::format("out{}", i), dir = base / fmt::format("dir{}", i);
    fs::create_directories(dir);
    const std::vector<std::string> args = fill(row, out, dir);
    const auto before = snapshot(dir);
    const CliResult r = run_cli(args);
    INFO(joined(args) << "\n  stderr: " << r.err);
    CHECK(r.rc == row.rc);
    CHECK(r.err.rfind("lenlab: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(contains(r.err, row.word));
    CHECK(!fs::exists(out));         // nothing written, not even the folder
    CHECK(snapshot(dir) == before);  // and nothing new beside the inputs
  }
}

TEST_CASE("every flag of train, run and eval is in the table at least once") {
  // The flags `lenlab train --help` and `lenlab run --help` list.
  std::vector<std::string> flags;
  for (const char* cmd : {"train", "run", "eval"}) {
    const CliResult help = run_cli({cmd, "--help"});
    for (const std::string& l : split(help.out, '\n'))
      if (l.rfind("  --", 0) == 0) flags.push_back(l.substr(2, l.find(' ', 2) - 2));
  }
  REQUIRE(flags.size() > 20);
  // Flags without a wrong value: a switch, and paths whose misuse other rows cover.
  const std::vector<std::string> no_wrong_value = {
      "--help",        "--overwrite",       "--out",
      "--figures",     "--emit-slurm",      "--reparam-inverse",
      "--predictions", "--attention-stats", "--representation-stats"};
  for (const std::string& flag : flags) {
    if (std::find(no_wrong_value.begin(), no_wrong_value.end(), flag) != no_wrong_value.end())
      continue;
    bool found = false;
    for (const Misuse& row : table())
      found = found || std::find(row.args.begin(), row.args.end(), flag) != row.args.end();
    CHECK_MESSAGE(found, flag << " has no row in the misuse table");
  }
}
