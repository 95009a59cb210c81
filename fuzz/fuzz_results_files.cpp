// libFuzzer target: the readers of the files a run or evaluation folder holds for statistics
// (results/README.md), each given a file's text. The input's first byte picks the reader (as
// (byte - '0') mod 10, so a seed starts with its digit); the rest is the file's text, or for the
// readers that take several files, the texts one after the other, separated by NUL bytes (the
// files are text: CSV or JSON; a missing part is a missing file, extra NULs stay in the last part):
//   0 results.csv             parse_results_csv
//   1 positions.csv           parse_positions_csv
//   2 results.csv \0 attention.csv            parse_results_csv, then add_attention_csv
//   3 results.csv \0 attention_distance.csv   parse_results_csv, then add_attention_distance_csv
//   4 results.csv \0 representation.csv       parse_results_csv, then add_representation_csv
//   5 loss.csv                parse_loss_csv
//   6 position_bias.csv       parse_position_bias_csv
//   7 eval.json               load_eval_source of a folder holding it
//   8 manifest.json \0 results.csv \0 positions.csv \0 attention.csv \0 attention_distance.csv
//     \0 position_bias.csv    load_run of a folder holding them (with its results)
//   9 eval.json \0 results.csv \0 representation.csv   `lenlab representation` of a folder
//     holding them (run_representation_report, its figure not drawn: no gnuplot)
// The readers that take a path read files written to a scratch folder.
//
// A UsageError is the expected answer to a bad file (the readers' documented error, lenlab's exit
// status 2). Anything else is a finding: a crash, a sanitizer report, another exception escaping
// (libFuzzer reports it as a deadly signal), a hang or unbounded memory.
//
// Also replayed over fuzz/corpus/results_files/ by the normal test suite (fuzz/replay_main.cpp).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "fuzz/scratch_folder.hpp"
#include "report/representation_report.hpp"
#include "results/eval_record.hpp"
#include "results/length_files.hpp"
#include "results/loss_file.hpp"
#include "results/position_bias_file.hpp"
#include "results/run_record.hpp"

namespace {

namespace fs = std::filesystem;

// A scratch folder for this process, removed at exit.
// The text split at NUL bytes into at most `most` parts (the last keeps any further NULs).
std::vector<std::string> split_parts(const std::string& text, size_t most) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < most) {
    const size_t nul = text.find('\0', start);
    if (nul == std::string::npos) break;
    parts.push_back(text.substr(start, nul - start));
    start = nul + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// A fresh folder `dir` holding names[i] with parts[i]'s text, for each part there is.
void write_folder(const fs::path& dir, const std::vector<std::string>& names,
                  const std::vector<std::string>& parts) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  for (size_t i = 0; i < parts.size() && i < names.size(); ++i) {
    std::ofstream out(dir / names[i], std::ios::binary | std::ios::trunc);
    out.write(parts[i].data(), static_cast<std::streamsize>(parts[i].size()));
    if (!out) {
      std::fprintf(stderr, "fuzz_results_files: cannot write %s\n", (dir / names[i]).c_str());
      std::abort();
    }
  }
}

// Parses results.csv, then adds the second part with `add` (attention, distance, representation).
template <typename Add>
void add_to_results(const std::string& text, Add add) {
  const std::vector<std::string> parts = split_parts(text, 2);
  std::vector<lenlab::LengthResult> results = lenlab::parse_results_csv(parts[0], "results.csv");
  add(parts.size() > 1 ? parts[1] : std::string(), results);
}

void read(int reader, const std::string& text, const fs::path& scratch) {
  switch (reader) {
    case 0:
      (void)lenlab::parse_results_csv(text, "results.csv");
      return;
    case 1:
      (void)lenlab::parse_positions_csv(text, "positions.csv");
      return;
    case 2:
      return add_to_results(text, [](const std::string& t, std::vector<lenlab::LengthResult>& r) {
        lenlab::add_attention_csv(t, "attention.csv", r);
      });
    case 3:
      return add_to_results(text, [](const std::string& t, std::vector<lenlab::LengthResult>& r) {
        lenlab::add_attention_distance_csv(t, "attention_distance.csv", r);
      });
    case 4:
      return add_to_results(text, [](const std::string& t, std::vector<lenlab::LengthResult>& r) {
        lenlab::add_representation_csv(t, "representation.csv", r);
      });
    case 5:
      (void)lenlab::parse_loss_csv(text, "loss.csv");
      return;
    case 6:
      (void)lenlab::parse_position_bias_csv(text, "position_bias.csv");
      return;
    case 7:
      write_folder(scratch / "eval", {"eval.json"}, {text});
      (void)lenlab::load_eval_source(scratch / "eval");
      return;
    case 8: {
      const std::vector<std::string> names = {"manifest.json",          "results.csv",
                                              "positions.csv",          "attention.csv",
                                              "attention_distance.csv", "position_bias.csv"};
      write_folder(scratch / "run", names, split_parts(text, names.size()));
      (void)lenlab::load_run(scratch / "run", /*with_results=*/true);
      return;
    }
    default: {
      const std::vector<std::string> names = {"eval.json", "results.csv", "representation.csv"};
      write_folder(scratch / "eval", names, split_parts(text, names.size()));
      std::ostringstream log;
      lenlab::RepresentationReportOptions options;
      options.dirs = {scratch / "eval"};
      options.out = scratch / "report";
      options.plot.gnuplot = (scratch / "no-gnuplot").string();  // never drawn
      options.log = &log;
      (void)lenlab::run_representation_report(options);
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const lenlab::fuzz::ScratchFolder scratch("fuzz_results_files");
  if (size == 0) return 0;
  const int reader = static_cast<uint8_t>(data[0] - '0') % 10;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    read(reader, text, scratch.dir);
  } catch (const lenlab::UsageError&) {
  }
  return 0;
}
