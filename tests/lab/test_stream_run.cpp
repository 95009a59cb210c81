// `lenlab eval RUN --stream` end to end on a tiny text run (lab/run/stream_run.hpp): stream.csv
// covers every position of the source once, its chunks sum to stream.json's cross-entropy, a
// file holding the test split's text reads as the split does, a Λ-mask's cache stays the same
// size; every bad input refused with one line naming it, nothing written.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/support/cli_support.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST_CASE("lenlab eval --stream reads a text once, chunk by chunk, and refuses bad input") {
  const fs::path dir = run_dir(fmt::format("stream-{}", ::getpid()));
  // 3 000 bytes: 20 blocks of 150, the test split blocks 19 (and 39: none), 150 characters.
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "in the beginning was the word. "[i % 31];
  const fs::path corpus = dir / "corpus.txt";
  std::ofstream(corpus, std::ios::binary) << text;
  const fs::path run = dir / "run";
  const CliResult trained = run_cli({"train",
                                     "--task",
                                     "text",
                                     "--corpus",
                                     corpus.string(),
                                     "--pe",
                                     "rope",
                                     "--steps",
                                     "20",
                                     "--l-train",
                                     "16",
                                     "--lengths",
                                     "8,16",
                                     "--eval-samples",
                                     "4",
                                     "--d-model",
                                     "16",
                                     "--n-head",
                                     "2",
                                     "--d-ff",
                                     "32",
                                     "--out",
                                     run.string()});
  INFO(trained.err);
  REQUIRE(trained.rc == 0);

  const auto stream = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> cmd = {"eval", run.string(), "--out", (dir / name).string()};
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    return run_cli(cmd);
  };
  const CliResult test = stream("test", {"--stream", "test", "--stream-chunk", "40"});
  INFO(test.err);
  REQUIRE(test.rc == 0);
  const auto rows = read_csv(dir / "test" / "stream.csv");
  const Json info = Json::parse(read_text(dir / "test" / "stream.json"));
  const int64_t characters = info.at("stream").at("characters").get<int64_t>();
  CHECK(characters == 150);
  REQUIRE(rows.size() == 4);  // 40, 40, 40, 30
  int64_t next = 1;
  double nll = 0;
  for (const auto& row : rows) {
    CHECK(std::stoll(row.at("first_position")) == next);
    next = std::stoll(row.at("last_position")) + 1;
    const double ce = std::stod(row.at("cross_entropy"));
    CHECK(std::stod(row.at("perplexity")) == doctest::Approx(std::exp(ce)).epsilon(1e-5));
    nll += ce * std::stoll(row.at("tokens"));
    CHECK(std::stoll(row.at("resident_bytes")) > 0);
  }
  CHECK(next == characters + 1);
  CHECK(info.at("cross_entropy").get<double>() == doctest::Approx(nll / characters).epsilon(1e-5));
  CHECK(info.at("status") == "completed");
  CHECK(info.at("stream").at("overlaps_training") == false);

  // The test split's text as a file: the same scores.
  const fs::path file = dir / "split.txt";
  std::ofstream(file, std::ios::binary) << text.substr(19 * 150, 150);
  REQUIRE(stream("file", {"--stream", file.string(), "--stream-chunk", "40"}).rc == 0);
  const auto from_file = read_csv(dir / "file" / "stream.csv");
  REQUIRE(from_file.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    CHECK(from_file[i].at("cross_entropy") == rows[i].at("cross_entropy"));

  // A Λ-mask and a cap: the cache keeps 1 + 2·8 rows, the same from the first chunk on.
  const CliResult lambda =
      stream("lambda", {"--stream", "all", "--stream-tokens", "200", "--stream-chunk", "50",
                        "--n-local", "8", "--n-global", "1", "--distance-cap", "8"});
  INFO(lambda.err);
  REQUIRE(lambda.rc == 0);
  const auto windowed = read_csv(dir / "lambda" / "stream.csv");
  REQUIRE(windowed.size() == 4);
  for (const auto& row : windowed) CHECK(row.at("cache_bytes") == windowed[0].at("cache_bytes"));
  const Json lambda_info = Json::parse(read_text(dir / "lambda" / "stream.json"));
  CHECK(lambda_info.at("attention").at("n_local") == 8);
  CHECK(lambda_info.at("stream").at("overlaps_training") == true);

  // Bad input: one line naming it, nothing written.
  std::ofstream(dir / "foreign.txt", std::ios::binary) << "in the Zoo";
  const CliResult scalar = run_cli(tiny_args(dir / "mean"));
  REQUIRE(scalar.rc == 0);
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--stream", (dir / "foreign.txt").string()}, "byte 0x5a at offset 7"},
           {{"--stream", (dir / "missing.txt").string()}, "missing.txt"},
           {{"--stream", "test", "--lengths", "8"}, "--lengths is for the evaluation by lengths"},
           {{"--stream", "test", "--attention-stats"}, "--attention-stats measures"},
           {{"--stream", "test", "--decode", "greedy"}, "--decode measures"},
           {{"--stream", "test", "--stream-chunk", "0"}, "--stream-chunk"},
           {{"--stream-tokens", "5"}, "--stream"},
           {{"--stream", "test", "--temperature", "auto-pmax"}, "which a stream has not"},
           {{"--stream", "all", "--max-memory", "10k"}, "need a key-value cache of"},
           {{"--stream", "test"}, "already holds a stream"}}) {
    std::vector<std::string> cmd = {
        "eval", run.string(), "--out",
        (dir / (says.rfind("already", 0) == 0 ? "test" : "bad")).string()};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const CliResult bad = run_cli(cmd);
    INFO(args.front() << " " << args.back() << ": " << bad.err);
    check_one_error_line(bad);
    CHECK(contains(bad.err, says));
    CHECK(!fs::exists(dir / "bad"));
  }
  const CliResult not_text = run_cli(
      {"eval", (dir / "mean").string(), "--stream", "test", "--out", (dir / "bad").string()});
  check_one_error_line(not_text);
  CHECK(contains(not_text.err, "task 'mean'"));
  CHECK(!fs::exists(dir / "bad"));
}
