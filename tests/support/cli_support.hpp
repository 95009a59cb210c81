#pragma once
// Helpers for the suites that run `lenlab` in-process (test_cli.cpp, test_train_run.cpp): the
// CLI's exit code and output, CSV and folder snapshots, and a run that takes milliseconds.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lab/cli/cli.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/test_support.hpp"
#include "train/run_settings.hpp"

namespace lenlab::test {

namespace fs = std::filesystem;

// An empty folder of the CLI suites' own (LENLAB_TEST_TMP/lab/<name>).
inline fs::path run_dir(const std::string& name) {
  return fresh_dir("lab", name);
}

struct CliResult {
  int rc;
  std::string out, err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"lenlab"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int rc = lenlab_main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {rc, out.str(), err.str()};
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  return parts;
}

// Every regular file in `dir` (not recursive) with its content.
inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().filename().string()] = read_text(e.path());
  return files;
}

// A run that takes a few milliseconds. l_test 8 with 20 samples: lengths 1..4 are enumerated
// exactly (2^l <= 20), 5..8 sampled.
inline constexpr int kTinySteps = 30, kTinyLTrain = 4, kTinyLTest = 8, kTinyEvalSamples = 20;
inline std::vector<std::string> tiny_args(const fs::path& out) {
  using std::to_string;
  return {"train",
          "--task",
          "mean",
          "--steps",
          to_string(kTinySteps),
          "--l-train",
          to_string(kTinyLTrain),
          "--l-test",
          to_string(kTinyLTest),
          "--eval-samples",
          to_string(kTinyEvalSamples),
          "--d-model",
          "16",
          "--n-head",
          "2",
          "--d-ff",
          "32",
          "--out",
          out.string()};
}

inline TrainSpec tiny_spec() {
  TrainSpec s;
  s.task = "mean";
  s.steps = kTinySteps;
  s.d_model = 16;
  s.n_head = 2;
  s.d_ff = 32;
  s.l_train = kTinyLTrain;
  s.l_test = kTinyLTest;
  s.eval_samples = kTinyEvalSamples;
  return s;
}

// A CSV file (results.csv, loss.csv) as one map column -> value per row.
inline std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  const std::vector<std::string> lines = split(read_text(p), '\n');
  REQUIRE(!lines.empty());
  const std::vector<std::string> header = split(lines[0], ',');
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = split(lines[i], ',');
    if (!lines[i].empty() && lines[i].back() == ',') cells.emplace_back();  // an empty last cell
    REQUIRE(cells.size() == header.size());
    std::map<std::string, std::string> row;
    for (size_t j = 0; j < cells.size(); ++j) row[header[j]] = cells[j];
    rows.push_back(row);
  }
  return rows;
}

inline void check_one_error_line(const CliResult& r) {
  CHECK(r.rc == 2);
  CHECK(r.err.rfind("lenlab: error:", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(!r.err.empty());
  if (!r.err.empty()) CHECK(r.err.back() == '\n');
}

}  // namespace lenlab::test
