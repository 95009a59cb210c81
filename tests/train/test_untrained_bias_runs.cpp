// T5's buckets that no training step reaches, on whole runs (train/untrained_bias.hpp): which
// distances a trained model leaves at their initial 0, the share of test pairs that read them
// (untrained_bias.csv), and `lenlab eval --distance-cap trained`.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "models/checkpoint.hpp"
#include "models/position_bias.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

std::string untrained_folder(const std::string& name) {
  return fmt::format("untrained-{}-{}", ::getpid(), name);
}

// A length-prediction run (l_train 4, tested to 8) with T5's default buckets (32, exact below 16),
// trained once for the file. Its sequences are [BOS, b_1..b_l, EOS] and the head reads EOS, so
// training reaches the distances 0..5 (EOS of a length-4 sequence to its BOS) and no other: the
// exact buckets 6..9 that lengths 5..8 need stay at 0.
const fs::path& t5_run(const std::vector<std::string>& extra = {}) {
  static std::map<std::vector<std::string>, fs::path> runs;
  if (!runs.count(extra)) {
    const fs::path out = run_dir(untrained_folder(fmt::format("run-{}", runs.size()))) / "run";
    std::vector<std::string> args = tiny_args(out);
    *(std::find(args.begin(), args.end(), "--task") + 1) = "length";
    *(std::find(args.begin(), args.end(), "--steps") + 1) = "60";
    args.insert(args.end(), {"--pe", "t5"});
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(args);
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    runs[extra] = out;
  }
  return runs[extra];
}

// The share of untrained pairs by length from a folder's untrained_bias.csv.
std::map<int, double> untrained_by_length(const fs::path& dir) {
  std::map<int, double> out;
  for (const auto& row : read_csv(dir / "untrained_bias.csv"))
    out[std::stoi(row.at("length"))] = std::stod(row.at("untrained_pairs"));
  return out;
}

}  // namespace

TEST_CASE("untrained bias: training leaves exactly the buckets past the window at 0") {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--t5-per-layer", "1"}}) {
    CAPTURE(extra.size());
    const fs::path& run = t5_run(extra);
    const std::optional<RunRecord> record = load_run(run);
    REQUIRE(record);
    const ModelConfig config = resolve(record->spec).model;
    const std::vector<double> params = load_checkpoint(run / "model.safetensors", config);
    const std::vector<uint8_t> untrained = untrained_distances(config, params, 12);
    // Distances 0..5 trained; 6..15 are exact buckets of their own, never reached.
    CHECK(untrained == std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1});
    // Every length past l_train: the read row (EOS, l + 1) sees l + 2 keys, of which those at
    // distances 6..l + 1 read an untrained bucket.
    const std::map<int, double> share = untrained_by_length(run);
    REQUIRE(share.size() == kTinyLTest);
    for (const auto& [l, s] : share) {
      CAPTURE(l);
      CHECK(s == doctest::Approx(l <= kTinyLTrain ? 0.0 : (l - 4.0) / (l + 2.0)).epsilon(1e-9));
    }
    // And RunRecord reads them.
    CHECK(record->results.back().untrained_pairs == doctest::Approx(4.0 / 10.0));
  }
  // Encodings without such buckets count nothing and write no file.
  ModelConfig alibi;
  alibi.pe = PositionalEncoding::kAlibi;
  CHECK(untrained_distances(alibi, {}, 9).empty());
}

TEST_CASE("lenlab eval --distance-cap trained: the cap is the largest trained distance") {
  const fs::path& run = t5_run();
  const fs::path trained_out = run_dir(untrained_folder("eval-trained"));
  CliResult r =
      run_cli({"eval", run.string(), "--out", trained_out.string(), "--distance-cap", "trained"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto info = nlohmann::json::parse(read_text(trained_out / "eval.json"));
  CHECK(info.at("attention").at("max_distance") == 5);
  for (const auto& [l, s] : untrained_by_length(trained_out)) CHECK(s == 0.0);
  // The same numbers as the cap given as a number.
  const fs::path five = run_dir(untrained_folder("eval-five"));
  r = run_cli({"eval", run.string(), "--out", five.string(), "--distance-cap", "5"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(read_text(trained_out / "results.csv") == read_text(five / "results.csv"));
  // Without a cap, the far pairs read buckets at 0.
  const fs::path plain = run_dir(untrained_folder("eval-plain"));
  r = run_cli({"eval", run.string(), "--out", plain.string()});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(untrained_by_length(plain).at(8) == doctest::Approx(0.4));
}

TEST_CASE("lenlab train --distance-cap trained: the manifest says what the cap came to") {
  const fs::path& run = t5_run({"--distance-cap", "trained"});
  const auto manifest = nlohmann::json::parse(read_text(run / "manifest.json"));
  CHECK(manifest.at("distance_cap_applied") == 5);
  for (const auto& [l, s] : untrained_by_length(run)) CHECK(s == 0.0);
  // A number is itself.
  const fs::path& seven = t5_run({"--distance-cap", "7"});
  CHECK(nlohmann::json::parse(read_text(seven / "manifest.json")).at("distance_cap_applied") == 7);
  // A cap past the trained distances maps the far keys onto an untrained bucket (7): as many pairs
  // read one as without a cap.
  CHECK(untrained_by_length(seven).at(8) == doctest::Approx(4.0 / 10.0));
}
