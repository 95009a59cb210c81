// `lenlab eval` and `--lengths`, in-process: evaluating a trained run again reproduces its
// results.csv; other lengths, seeds and sample counts; predictions.csv agrees with results.csv
// sequence by sequence; what cannot be evaluated is refused before anything is written.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/error.hpp"
#include "tests/support/cli_support.hpp"
#include "train/lengths.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// One tiny trained run for the whole file (trained once, read only). ctest runs each test case in
// a process of its own, two at a time: each process trains into a folder of its own.
const fs::path& trained_run() {
  static const fs::path dir = [] {
    const fs::path out = run_dir(fmt::format("eval-source-{}", ::getpid())) / "run";
    const CliResult r = run_cli(tiny_args(out));
    INFO("err: " << r.err);
    REQUIRE(r.rc == 0);
    return out;
  }();
  return dir;
}

CliResult eval(const std::vector<std::string>& extra, const fs::path& out) {
  std::vector<std::string> args = {"eval", trained_run().string(), "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

}  // namespace

TEST_CASE(
    "parse_lengths reads lists, ranges and steps, sorted and unique, and format_lengths reads "
    "back") {
  CHECK(parse_lengths("1..5,64,128", "--lengths", 1000) ==
        std::vector<int>{1, 2, 3, 4, 5, 64, 128});
  CHECK(parse_lengths("128,3,1..3,3", "--lengths", 1000) == std::vector<int>{1, 2, 3, 128});
  CHECK(parse_lengths("64..256:64", "--lengths", 1000) == std::vector<int>{64, 128, 192, 256});
  CHECK(parse_lengths("10..20:7", "--lengths", 1000) == std::vector<int>{10, 17});
  CHECK(parse_lengths("7", "--lengths", 7) == std::vector<int>{7});
  for (const char* bad : {"", ",", "1,", ",1", "0", "8", "a", "1..", "..3", "3..1", "1..3:0",
                          "1..3:x", "-1", "+2", " 1", "1e2", "1.5", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_lengths(bad, "--lengths", 7), doctest::Contains("--lengths"),
                         UsageError);
  }
  CHECK_THROWS_WITH_AS(parse_lengths("1..100", "--lengths", 1000, 50),
                       doctest::Contains("more than 50"), UsageError);
  for (const std::vector<int>& v : std::vector<std::vector<int>>{
           {1}, {1, 2}, {1, 2, 3}, {1, 2, 3, 50, 64, 65, 66, 128}, {5, 7, 9}}) {
    CAPTURE(format_lengths(v));
    CHECK(parse_lengths(format_lengths(v), "x", 1000) == v);
  }
  CHECK(format_lengths({1, 2, 3, 4, 5, 64, 128}) == "1..5,64,128");
  CHECK(format_lengths({1, 2, 64}) == "1,2,64");
}

TEST_CASE("lenlab eval with the run's own settings reproduces its results.csv exactly") {
  const fs::path out = run_dir("eval-same") / "out";
  const CliResult r = eval({}, out);
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  CHECK(read_text(out / "results.csv") == read_text(trained_run() / "results.csv"));
  const Json info = Json::parse(read_text(out / "eval.json"));
  CHECK(info.at("status") == "completed");
  CHECK(info.at("lengths") == fmt::format("1..{}", kTinyLTest));
  CHECK(info.at("eval_samples") == kTinyEvalSamples);
  CHECK(info.at("source").at("id") == "run");
  CHECK(info.at("source").at("config").at("task") == "mean");
  CHECK(info.at("files") == Json::array({"eval.json", "results.csv"}));
  CHECK_FALSE(fs::exists(out / "predictions.csv"));
  // A second time: refused without --overwrite, and the folder is untouched.
  const auto before = snapshot(out);
  const CliResult again = eval({}, out);
  CHECK(again.rc == 2);
  CHECK(again.err.find("--overwrite") != std::string::npos);
  CHECK(snapshot(out) == before);
  CHECK(eval({"--overwrite"}, out).rc == 0);
}

TEST_CASE("lenlab eval at other lengths gives the same rows where the lengths are the same") {
  const fs::path out = run_dir("eval-lengths") / "out";
  const CliResult r = eval({"--lengths", "2,5..6,30"}, out);
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  const auto source = read_csv(trained_run() / "results.csv");
  const auto rows = read_csv(out / "results.csv");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].at("length") == "2");
  CHECK(rows[3].at("length") == "30");
  // The same fixed test sequences at the same length: the same numbers, to the digit.
  CHECK(rows[0] == source[1]);
  CHECK(rows[1] == source[4]);
  CHECK(rows[2] == source[5]);
  CHECK(std::stoi(rows[3].at("n_sequences")) == kTinyEvalSamples);
  CHECK(std::isfinite(std::stod(rows[3].at("mse"))));
  // Another seed draws other sequences at a sampled length, the same at an enumerated one.
  const fs::path out2 = run_dir("eval-seed") / "out";
  REQUIRE(eval({"--lengths", "2,6", "--eval-seed", "7"}, out2).rc == 0);
  const auto seeded = read_csv(out2 / "results.csv");
  CHECK(seeded[0] == source[1]);
  CHECK(seeded[1].at("mse") != source[5].at("mse"));
}

TEST_CASE("predictions.csv holds every test sequence, and its errors add up to results.csv") {
  const fs::path out = run_dir("eval-predictions") / "out";
  const CliResult r = eval({"--lengths", "1..3,9", "--samples", "6", "--predictions"}, out);
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  const auto results = read_csv(out / "results.csv");
  const auto rows = read_csv(out / "predictions.csv");
  REQUIRE(results.size() == 4);
  // 2 + 4 enumerated sequences (2^l <= 6), 6 sampled at 3 and 9.
  REQUIRE(rows.size() == 2 + 4 + 6 + 6);
  for (const auto& res : results) {
    const std::string length = res.at("length");
    double mse = 0, weight = 0;
    int n = 0;
    for (const auto& p : rows) {
      if (p.at("length") != length) continue;
      CHECK(p.at("input").size() == std::stoul(length));  // the bits between BOS and EOS
      const std::string& bits = p.at("input");
      const double ones = static_cast<double>(std::count(bits.begin(), bits.end(), '1'));
      CHECK(std::stod(p.at("target")) == doctest::Approx(ones / bits.size()));  // the mean task
      CHECK(std::stod(p.at("prediction")) == doctest::Approx(std::stod(p.at("output"))));
      const double e = std::stod(p.at("prediction")) - std::stod(p.at("target"));
      mse += std::stod(p.at("weight")) * e * e;
      weight += std::stod(p.at("weight"));
      ++n;
    }
    CAPTURE(length);
    CHECK(n == std::stoi(res.at("n_sequences")));
    CHECK(weight == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(mse == doctest::Approx(std::stod(res.at("mse"))).epsilon(1e-6));
  }
  const Json info = Json::parse(read_text(out / "eval.json"));
  CHECK(info.at("files") == Json::array({"eval.json", "results.csv", "predictions.csv"}));
}

TEST_CASE("what lenlab eval cannot evaluate is refused before anything is written") {
  const fs::path base = run_dir("eval-refused");
  // A learned position table covers the training run's l_test only.
  const fs::path learned = base / "learned";
  std::vector<std::string> args = tiny_args(learned);
  args.insert(args.end(), {"--pe", "learned"});
  REQUIRE(run_cli(args).rc == 0);
  const fs::path out = base / "out";
  CliResult r = run_cli({"eval", learned.string(), "--lengths", "1..9", "--out", out.string()});
  CHECK(r.rc == 2);
  CHECK(r.err.find("learned position table") != std::string::npos);
  CHECK(r.err.find("up to 8") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK(run_cli({"eval", learned.string(), "--lengths", "8", "--out", out.string()}).rc == 0);
  // A run that is not completed has no weights to trust.
  const fs::path running = base / "running";
  fs::create_directories(running);
  fs::copy_file(trained_run() / "manifest.json", running / "manifest.json");
  Json m = Json::parse(read_text(running / "manifest.json"));
  m["status"] = "running";
  write_raw(running / "manifest.json", m.dump());
  r = run_cli({"eval", running.string(), "--out", (base / "out2").string()});
  CHECK(r.rc == 2);
  CHECK(r.err.find("'running'") != std::string::npos);
  CHECK_FALSE(fs::exists(base / "out2"));
  // Writing over a trained run is refused.
  r = run_cli({"eval", trained_run().string(), "--out", learned.string(), "--overwrite"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("trained run") != std::string::npos);
  // A reparam checked at the training lengths' targets is checked again at the new ones: x(20 - x)
  // is increasing on the sums 0..8, not on 0..20.
  const fs::path bent = base / "bent";
  args = tiny_args(bent);
  *std::find(args.begin(), args.end(), "mean") = "sum";
  args.insert(args.end(), {"--reparam", "x*(20-x)"});
  REQUIRE(run_cli(args).rc == 0);
  r = run_cli({"eval", bent.string(), "--lengths", "1..20", "--out", (base / "out3").string()});
  CHECK(r.rc == 2);
  CHECK(r.err.find("monotone") != std::string::npos);
  CHECK_FALSE(fs::exists(base / "out3"));
  CHECK(run_cli({"eval", bent.string(), "--lengths", "9", "--out", (base / "out3").string()}).rc ==
        0);
}

TEST_CASE("train --lengths evaluates those lengths only, and l_test follows them") {
  const fs::path out = run_dir("train-lengths") / "run";
  std::vector<std::string> args = tiny_args(out);
  const auto it = std::find(args.begin(), args.end(), "--l-test");
  args.erase(it, it + 2);
  args.insert(args.end(), {"--lengths", "1..3,12"});
  const CliResult r = run_cli(args);
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  const auto rows = read_csv(out / "results.csv");
  REQUIRE(rows.size() == 4);
  CHECK(rows.back().at("length") == "12");
  const Json m = Json::parse(read_text(out / "manifest.json"));
  CHECK(m.at("config").at("l_test") == 12);
  CHECK(m.at("config").at("lengths") == "1..3,12");
  CHECK(r.err.find("3 lengths <= 4") != std::string::npos);
  // Without --lengths the manifest has no such key, so earlier runs keep their ids.
  CHECK_FALSE(
      Json::parse(read_text(trained_run() / "manifest.json")).at("config").contains("lengths"));
}
