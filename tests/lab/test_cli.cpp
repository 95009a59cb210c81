// `lenlab train`'s command line, in-process: help, bad input (exit 2, one error line, nothing
// written), the device flag, integer parsing, and existing runs with and without --overwrite.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "lab/run/device.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST_CASE("lenlab --help and lenlab train --help list every flag with its default") {
  const CliResult top = run_cli({"--help"});
  CHECK(top.rc == 0);
  CHECK(top.out.find("train") != std::string::npos);
  CHECK(top.out.find("--version") != std::string::npos);
  CHECK(top.err.empty());

  const CliResult version = run_cli({"--version"});
  CHECK(version.rc == 0);
  CHECK(version.out.find(std::string("lenlab ") + lenlab::version() + " (") != std::string::npos);

  const CliResult help = run_cli({"train", "--help"});
  CHECK(help.rc == 0);
  CHECK(help.err.empty());
  // flag -> default as CLI11 prints it ("--steps INT=2000"); "" for flags without a default.
  const std::vector<std::pair<std::string, std::string>> flags = {{"--task", "length"},
                                                                  {"--pe", "nope"},
                                                                  {"--reparam", "identity"},
                                                                  {"--reparam-inverse", ""},
                                                                  {"--reparam-shift", "0"},
                                                                  {"--pe-bias", ""},
                                                                  {"--t5-buckets", "32"},
                                                                  {"--t5-max-distance", "128"},
                                                                  {"--t5-per-layer", "0"},
                                                                  {"--rope-base", "10000"},
                                                                  {"--train-rope-scaling", ""},
                                                                  {"--train-rope-factor", "1"},
                                                                  {"--fire-width", "32"},
                                                                  {"--fire-threshold", "train"},
                                                                  {"--l-train", "10"},
                                                                  {"--l-train-min", "0"},
                                                                  {"--l-test", "50"},
                                                                  {"--lengths", ""},
                                                                  {"--steps", "2000"},
                                                                  {"--until-fit", ""},
                                                                  {"--fit-every", "200"},
                                                                  {"--fit-patience", "10"},
                                                                  {"--fit-samples", "64"},
                                                                  {"--validate", ""},
                                                                  {"--batch", "64"},
                                                                  {"--seed", "1"},
                                                                  {"--n-layer", "2"},
                                                                  {"--d-model", "64"},
                                                                  {"--n-head", "4"},
                                                                  {"--d-ff", "256"},
                                                                  {"--embedding-scale", "1"},
                                                                  {"--lr", "0.001"},
                                                                  {"--beta1", "0.9"},
                                                                  {"--beta2", "0.999"},
                                                                  {"--adam-eps", "1e-08"},
                                                                  {"--warmup", "200"},
                                                                  {"--min-lr-ratio", "0"},
                                                                  {"--weight-decay", "0"},
                                                                  {"--clip", "1"},
                                                                  {"--precision", "float32"},
                                                                  {"--save-init", ""},
                                                                  {"--save-batches", ""},
                                                                  {"--eval-samples", "500"},
                                                                  {"--eval-seed", "20240601"},
                                                                  {"--threads", "1"},
                                                                  {"--out", ""},
                                                                  {"--n-symbols", "16"},
                                                                  {"--key-length", "4"},
                                                                  {"--modulus", "5"},
                                                                  {"--corpus", ""},
                                                                  {"--markov-order", "2"},
                                                                  {"--markov-concentration", "0.5"},
                                                                  {"--markov-seed", "1"},
                                                                  {"--depths", ""},
                                                                  {"--vcl-offset", "0"},
                                                                  {"--vcl-alpha", "0"},
                                                                  {"--vcl-prefix", "mask"},
                                                                  {"--init-from", ""},
                                                                  {"--random-positions", "0"},
                                                                  {"--misalign-alpha", "0"},
                                                                  {"--misalign-extra", "0:0.5"},
                                                                  {"--misalign-kind", "sce"},
                                                                  {"--misalign-control", "0"},
                                                                  {"--n-local", ""},
                                                                  {"--n-global", "0"},
                                                                  {"--distance-cap", ""},
                                                                  {"--rope-scaling", ""},
                                                                  {"--rope-factor", "auto"},
                                                                  {"--yarn-alpha", "1"},
                                                                  {"--yarn-beta", "32"},
                                                                  {"--temperature", "1"},
                                                                  {"--temperature-min", "0.5"},
                                                                  {"--temperature-step", "0.05"},
                                                                  {"--temperature-scope", "logit"},
                                                                  {"--attention-stats", ""},
                                                                  {"--decode", "teacher-forced"},
                                                                  {"--overwrite", ""},
                                                                  {"--device", "auto"},
                                                                  {"--max-memory", ""},
                                                                  {"--max-time", "24h"}};
  const std::vector<std::string> lines = split(help.out, '\n');
  for (const auto& [flag, default_value] : flags) {
    INFO(flag << " (default '" << default_value << "')");
    const std::string* line = nullptr;
    for (const std::string& l : lines)
      if (l.rfind("  " + flag + " ", 0) == 0) line = &l;
    REQUIRE(line != nullptr);
    if (!default_value.empty()) {
      // The first word after the flag is "TYPE=default".
      const std::vector<std::string> words = split(line->substr(2 + flag.size() + 1), ' ');
      REQUIRE(!words.empty());
      CHECK(words[0].substr(words[0].find('=') + 1) == default_value);
    }
  }
  // ... and no flag is missing from the list above.
  for (const std::string& l : lines) {
    if (l.rfind("  --", 0) != 0) continue;
    const std::string flag = l.substr(2, l.find(' ', 2) - 2);
    INFO("help line: " << l);
    CHECK(std::any_of(flags.begin(), flags.end(), [&](const auto& f) { return f.first == flag; }));
  }
  // The documented defaults are the code's defaults.
  const TrainSpec d;
  CHECK(d.steps == 2000);
  CHECK(d.optimizer.lr == 1e-3);
  CHECK(d.optimizer.warmup_steps == 200);
  CHECK(d.eval_seed == 20240601u);
}

TEST_CASE("bad input: exit 2, one error line naming the value, nothing written") {
  const fs::path dir = run_dir("bad_input");
  const fs::path out = dir / "out";
  const fs::path file = dir / "F";
  std::ofstream(file) << "not a folder\n";

  struct Case {
    std::vector<std::string> args;          // after "train"; --out is appended
    std::vector<std::string> must_mention;  // substrings of the error line
  };
  const std::vector<Case> cases = {
      {{"--task", "foo"}, {"'foo'", "'mean'", "'length'", "'sum'", "'mean-uniform'"}},
      {{"--pe", "rotary"}, {"'rotary'", "'nope'", "'learned'", "'alibi'", "'rope'"}},
      {{"--reparam", "cube"}, {"'cube'", "'identity'", "'sqrt'", "'log'", "'invsqrt'"}},
      {{"--l-train", "0"}, {"--l-train", "got 0"}},
      {{"--l-train", "-3"}, {"--l-train", "got -3"}},
      {{"--l-test", "5", "--l-train", "10"}, {"--l-test (5)", "--l-train (10)"}},
      {{"--d-model", "60", "--n-head", "8"}, {"--d-model 60", "--n-head 8"}},
      {{"--lr", "nan"}, {"--lr", "got nan"}},
      {{"--lr", "inf"}, {"--lr", "got inf"}},
      {{"--lr", "-1"}, {"--lr", "got -1"}},
      {{"--steps", "0"}, {"--steps", "got 0"}},
      {{"--batch", "0"}, {"--batch", "got 0"}},
      {{"--frobnicate"}, {"--frobnicate"}},
      {{"--reparam", "log", "--task", "sum"}, {"'log'", "'sum'", "--reparam-shift"}},
      {{"--reparam", "x+*"}, {"'x+*'", "'identity'"}},
      {{"--device", "tpu"}, {"--device", "tpu", "auto", "cpu", "cuda"}},
  };
  SUBCASE("each bad value") {
    for (const Case& c : cases) {
      std::vector<std::string> args = {"train"};
      args.insert(args.end(), c.args.begin(), c.args.end());
      args.insert(args.end(), {"--out", out.string()});
      std::string shown;
      for (const std::string& a : c.args) shown += a + " ";
      INFO("lenlab train " << shown);
      const CliResult r = run_cli(args);
      INFO("err: " << r.err);
      check_one_error_line(r);
      CHECK(r.out.empty());
      for (const std::string& s : c.must_mention) CHECK(r.err.find(s) != std::string::npos);
      CHECK(!fs::exists(out));
    }
  }
  SUBCASE("--out below a regular file") {
    const fs::path bad = file / "sub";
    const CliResult r = run_cli({"train", "--steps", "1", "--out", bad.string()});
    INFO("err: " << r.err);
    check_one_error_line(r);
    CHECK(r.err.find(bad.string()) != std::string::npos);
    CHECK(fs::is_regular_file(file));
    CHECK(read_text(file) == "not a folder\n");
  }
  SUBCASE("missing --out") {
    const CliResult r = run_cli({"train", "--steps", "1"});
    INFO("err: " << r.err);
    check_one_error_line(r);
    CHECK(r.err.find("--out") != std::string::npos);
  }
  SUBCASE("empty --out") {
    const CliResult r = run_cli({"train", "--steps", "1", "--out", ""});
    INFO("err: " << r.err);
    check_one_error_line(r);
    CHECK(r.err.find("--out") != std::string::npos);
  }
  SUBCASE("no subcommand") {
    const CliResult r = run_cli({});
    check_one_error_line(r);
  }
  // Only `F` was ever created in the test's folder.
  int n_entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n_entries;
  CHECK(n_entries == 1);
}

TEST_CASE("--device cuda without a usable GPU is one clear error, and nothing is written") {
  if (Device::choose("auto").gpu()) {
    MESSAGE("not checked: this machine has a usable GPU (tests/cuda covers it)");
    return;
  }
  const fs::path dir = run_dir("no_gpu");
  for (const std::vector<std::string>& cmd :
       {tiny_args(dir / "run"), std::vector<std::string>{"reproduce", "--figures", "1a", "--out",
                                                         (dir / "exp").string()}}) {
    std::vector<std::string> args = cmd;
    args.insert(args.end(), {"--device", "cuda"});
    const CliResult r = run_cli(args);
    INFO("err: " << r.err);
    check_one_error_line(r);
    CHECK(r.err.find("--device cuda") != std::string::npos);
    CHECK(r.err.find(built_with_cuda() ? "no" : "without the CUDA backend") != std::string::npos);
    CHECK(r.err.find("--device cpu") != std::string::npos);
  }
  CHECK(!fs::exists(dir / "run"));
  CHECK(!fs::exists(dir / "exp" / "runs"));
}

TEST_CASE("a negative --seed or --eval-seed is rejected, not wrapped to 2^64 - 1") {
  // CLI11 2.1 converts "-1" for an unsigned option with strtoull, which wraps it.
  const fs::path dir = run_dir("negative_seed");
  for (const std::string flag : {"--seed", "--eval-seed"}) {
    INFO(flag);
    const fs::path out = dir / "out";
    std::vector<std::string> args = tiny_args(out);
    args.insert(args.end(), {flag, "-1"});
    const CliResult r = run_cli(args);
    INFO("err (last 300 characters): "
         << r.err.substr(r.err.size() - std::min<size_t>(300, r.err.size())));
    CHECK(r.rc == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(!fs::exists(out));
    fs::remove_all(out);
  }
}

TEST_CASE("an integer with a leading zero is decimal (or refused), never octal") {
  // CLI11 2.1 converts integers with strtol(..., base 0): "--steps 010" would be 8 steps and
  // "--l-test 050" 40 lengths, silently.
  const fs::path out = run_dir("leading_zero") / "run";
  std::vector<std::string> args = tiny_args(out);
  const auto steps = std::find(args.begin(), args.end(), "--steps");
  REQUIRE(steps != args.end());
  *(steps + 1) = "010";
  const CliResult r = run_cli(args);
  INFO("err (last 300 characters): "
       << r.err.substr(r.err.size() - std::min<size_t>(300, r.err.size())));
  if (r.rc == 0) {
    CHECK(Json::parse(read_text(out / "manifest.json")).at("config").at("steps") == 10);
  } else {
    check_one_error_line(r);
    CHECK(r.err.find("010") != std::string::npos);
    CHECK(!fs::exists(out));
  }
}

TEST_CASE("a second run into the same --out needs --overwrite") {
  const fs::path out = run_dir("existing") / "run";
  REQUIRE(run_cli(tiny_args(out)).rc == 0);
  const std::map<std::string, std::string> first = snapshot(out);
  REQUIRE(first.size() == 4);

  std::vector<std::string> again = tiny_args(out);
  again.insert(again.end(), {"--seed", "2"});
  const CliResult refused = run_cli(again);
  INFO("err: " << refused.err);
  check_one_error_line(refused);
  CHECK(refused.err.find("--overwrite") != std::string::npos);
  CHECK(refused.err.find(out.string()) != std::string::npos);
  CHECK(snapshot(out) == first);  // not a byte changed, no stray temporaries

  again.push_back("--overwrite");
  const CliResult replaced = run_cli(again);
  CHECK(replaced.rc == 0);
  const std::map<std::string, std::string> second = snapshot(out);
  CHECK(second.size() == 4);
  CHECK(second.at("loss.csv") != first.at("loss.csv"));  // the seed-2 run's
  CHECK(Json::parse(second.at("manifest.json")).at("config").at("seed") == 2);
}

TEST_CASE("replacing a completed run with --overwrite leaves none of the old run's outputs") {
  // A diverged run writes no results.csv or model.safetensors; those of the run it replaced must
  // not stay beside its manifest (they belong to another configuration).
  const fs::path out = run_dir("overwrite_stale") / "run";
  REQUIRE(run_cli(tiny_args(out)).rc == 0);
  REQUIRE(fs::exists(out / "results.csv"));
  const CliResult r =
      run_cli({"train",      "--task",     "length", "--lr",           "1e30", "--clip",
               "0",          "--warmup",   "0",      "--steps",        "20",   "--d-model",
               "16",         "--n-head",   "2",      "--d-ff",         "32",   "--l-train",
               "4",          "--l-test",   "8",      "--eval-samples", "20",   "--out",
               out.string(), "--overwrite"});
  REQUIRE(r.rc == 3);
  CHECK(Json::parse(read_text(out / "manifest.json")).at("status") == "diverged");
  CHECK(!fs::exists(out / "results.csv"));
  CHECK(!fs::exists(out / "model.safetensors"));
}
