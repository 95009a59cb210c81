// `lenlab train` end to end, in-process: help, bad input (exit 2, one error line, nothing
// written), existing runs and --overwrite, the files of a completed run, reproducibility,
// divergence (exit 3), that training actually learns, and learned positions past their table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/cli.hpp"
#include "lab/device.hpp"
#include "models/backend.hpp"
#include "models/checkpoint.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "models/safetensors.hpp"
#include "test_support.hpp"
#include "train/evaluate.hpp"
#include "train/train_spec.hpp"

using namespace lenlab;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

using lenlab::test::read_text;
fs::path fresh_dir(const std::string& name) {
  return lenlab::test::fresh_dir("lab", name);
}

struct CliResult {
  int rc;
  std::string out, err;
};

CliResult run_cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"lenlab"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int rc = lenlab_main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {rc, out.str(), err.str()};
}

// An empty folder of this test's own below LENLAB_TEST_TMP.

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  return parts;
}

// Every regular file in `dir` (not recursive) with its content.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().filename().string()] = read_text(e.path());
  return files;
}

// A run that takes a few milliseconds. l_test 8 with 20 samples: lengths 1..4 are enumerated
// exactly (2^l <= 20), 5..8 sampled.
constexpr int kTinySteps = 30, kTinyLTrain = 4, kTinyLTest = 8, kTinyEvalSamples = 20;
std::vector<std::string> tiny_args(const fs::path& out) {
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

TrainSpec tiny_spec() {
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
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  const std::vector<std::string> lines = split(read_text(p), '\n');
  REQUIRE(!lines.empty());
  const std::vector<std::string> header = split(lines[0], ',');
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = split(lines[i], ',');
    REQUIRE(cells.size() == header.size());
    std::map<std::string, std::string> row;
    for (size_t j = 0; j < cells.size(); ++j) row[header[j]] = cells[j];
    rows.push_back(row);
  }
  return rows;
}

void check_one_error_line(const CliResult& r) {
  CHECK(r.rc == 2);
  CHECK(r.err.rfind("lenlab: error:", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(!r.err.empty());
  if (!r.err.empty()) CHECK(r.err.back() == '\n');
}

}  // namespace

TEST_CASE("lenlab --help and lenlab train --help list every flag with its default") {
  const CliResult top = run_cli({"--help"});
  CHECK(top.rc == 0);
  CHECK(top.out.find("train") != std::string::npos);
  CHECK(top.out.find("--version") != std::string::npos);
  CHECK(top.err.empty());

  const CliResult version = run_cli({"--version"});
  CHECK(version.rc == 0);
  CHECK(version.out.find("lenlab 0.1.0") != std::string::npos);

  const CliResult help = run_cli({"train", "--help"});
  CHECK(help.rc == 0);
  CHECK(help.err.empty());
  // flag -> default as CLI11 prints it ("--steps INT=2000"); "" for flags without a default.
  const std::vector<std::pair<std::string, std::string>> flags = {{"--task", "length"},
                                                                  {"--pe", "nope"},
                                                                  {"--reparam", "identity"},
                                                                  {"--reparam-inverse", ""},
                                                                  {"--reparam-shift", "0"},
                                                                  {"--l-train", "10"},
                                                                  {"--l-test", "50"},
                                                                  {"--steps", "2000"},
                                                                  {"--batch", "64"},
                                                                  {"--seed", "1"},
                                                                  {"--n-layer", "2"},
                                                                  {"--d-model", "64"},
                                                                  {"--n-head", "4"},
                                                                  {"--d-ff", "256"},
                                                                  {"--lr", "0.001"},
                                                                  {"--warmup", "200"},
                                                                  {"--min-lr-ratio", "0"},
                                                                  {"--weight-decay", "0"},
                                                                  {"--clip", "1"},
                                                                  {"--eval-samples", "500"},
                                                                  {"--eval-seed", "20240601"},
                                                                  {"--threads", "1"},
                                                                  {"--out", ""},
                                                                  {"--overwrite", ""},
                                                                  {"--device", "auto"}};
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
  const fs::path dir = fresh_dir("bad_input");
  const fs::path out = dir / "out";
  const fs::path file = dir / "F";
  std::ofstream(file) << "not a folder\n";

  struct Case {
    std::vector<std::string> args;          // after "train"; --out is appended
    std::vector<std::string> must_mention;  // substrings of the error line
  };
  const std::vector<Case> cases = {
      {{"--task", "foo"}, {"'foo'", "'mean'", "'length'", "'sum'", "'mean-uniform'"}},
      {{"--pe", "sinusoid"}, {"'sinusoid'", "'nope'", "'learned'", "'alibi'", "'rope'"}},
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
  if (resolve_device("auto").cuda) {
    MESSAGE("not checked: this machine has a usable GPU (tests/cuda covers it)");
    return;
  }
  const fs::path dir = fresh_dir("no_gpu");
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
  const fs::path dir = fresh_dir("negative_seed");
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
  const fs::path out = fresh_dir("leading_zero") / "run";
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
  const fs::path out = fresh_dir("existing") / "run";
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
  const fs::path out = fresh_dir("overwrite_stale") / "run";
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

TEST_CASE("a tiny run writes a complete, consistent set of files") {
  const fs::path out = fresh_dir("tiny") / "run";
  const CliResult r = run_cli(tiny_args(out));
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("wrote ") != std::string::npos);

  // Nothing else in the folder (temporaries and the writability probe are gone).
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"loss.csv", "manifest.json", "model.safetensors", "results.csv"});

  // results.csv: one row per length 1..l_test, finite numbers.
  const std::string results_text = read_text(out / "results.csv");
  CHECK(results_text.rfind("length,mse,", 0) == 0);
  CHECK(results_text.find("nan") == std::string::npos);
  const auto rows = read_csv(out / "results.csv");
  REQUIRE(rows.size() == static_cast<size_t>(kTinyLTest));
  for (int l = 1; l <= kTinyLTest; ++l) {
    const auto& row = rows[l - 1];
    INFO("length " << l);
    CHECK(std::stoi(row.at("length")) == l);
    const bool exact = (1 << l) <= kTinyEvalSamples;
    CHECK(row.at("exact") == (exact ? "1" : "0"));
    CHECK(std::stoi(row.at("n_sequences")) == (exact ? 1 << l : kTinyEvalSamples));
    CHECK(std::isfinite(std::stod(row.at("mse"))));
    CHECK(std::stod(row.at("mse")) >= 0);
    // identity reparam: the trained-on loss is the test loss.
    CHECK(std::stod(row.at("mse")) == doctest::Approx(std::stod(row.at("mse_reparam"))));
    if (exact) CHECK(std::stod(row.at("mean_target")) == doctest::Approx(0.5).epsilon(1e-9));
    CHECK(row.at("n_nonfinite") == "0");
    for (const auto& [column, value] : row) {
      INFO(column << " = " << value);
      CHECK(std::isfinite(std::stod(value)));
    }
  }

  // manifest.json: completed, every setting, provenance, timings.
  const Json m = Json::parse(read_text(out / "manifest.json"));
  CHECK(m.at("status") == "completed");
  CHECK(!m.at("git_revision").get<std::string>().empty());
  CHECK(m.at("command_line").get<std::string>().find("--task mean") != std::string::npos);
  CHECK(m.at("wall_seconds").get<double>() > 0);
  CHECK(m.at("train_seconds").get<double>() > 0);
  CHECK(std::isfinite(m.at("final_train_loss").get<double>()));
  CHECK(m.at("final_train_loss").get<double>() > 0);
  // How the error grows past l_train, fitted per run (mean task: a = l_train).
  CHECK(m.at("error_growth_fit").at("a").get<double>() == 4.0);
  CHECK(std::isfinite(m.at("error_growth_fit").at("p").get<double>()));
  const Json& c = m.at("config");
  CHECK(c.at("task") == "mean");
  CHECK(c.at("pe") == "nope");
  CHECK(c.at("reparam") == "identity");
  CHECK(c.at("steps") == kTinySteps);
  CHECK(c.at("l_train") == kTinyLTrain);
  CHECK(c.at("l_test") == kTinyLTest);
  CHECK(c.at("eval_samples") == kTinyEvalSamples);
  CHECK(c.at("seed") == 1);  // defaults are recorded too
  CHECK(c.at("batch_size") == 64);
  CHECK(c.at("eval_seed") == 20240601);
  CHECK(c.at("threads") == 1);
  CHECK(c.at("n_layer") == 2);
  CHECK(c.at("d_model") == 16);
  CHECK(c.at("warmup_steps") == 200);
  CHECK(c.at("lr") == 1e-3);
  CHECK(c.at("clip_norm") == 1.0);
  CHECK(c.at("beta2") == 0.999);
  CHECK(c == Json::parse(to_json(tiny_spec()).dump()));

  // loss.csv: a header and one row per step, on the schedule.
  const auto loss_rows = read_csv(out / "loss.csv");
  CHECK(split(read_text(out / "loss.csv"), '\n').size() == static_cast<size_t>(kTinySteps) + 1);
  REQUIRE(loss_rows.size() == static_cast<size_t>(kTinySteps));
  const OptimizerConfig oc;
  for (int s = 0; s < kTinySteps; ++s) {
    CHECK(std::stoi(loss_rows[s].at("step")) == s + 1);
    CHECK(std::stod(loss_rows[s].at("lr")) ==
          doctest::Approx(scheduled_lr(oc, s, kTinySteps)).epsilon(1e-5));
    CHECK(std::isfinite(std::stod(loss_rows[s].at("loss"))));
  }

  // model.safetensors: loads into a model of the same config and reproduces results.csv.
  const ResolvedSpec resolved = resolve(tiny_spec());
  const SafeTensors st = load_safetensors(out / "model.safetensors");
  CHECK(st.metadata.at("format") == "lenlab");
  CHECK(Json::parse(st.metadata.at("config")) == c);
  Transformer<float> model(resolved.model);
  load_checkpoint(out / "model.safetensors", resolved.model, model.params());
  const std::vector<LengthResult> again = evaluate(
      model, {{resolved.task, &resolved.reparam, kTinyLTest, kTinyEvalSamples, 20240601, {}}})[0];
  Transformer<float> untrained(resolved.model);
  untrained.init(1);
  const std::vector<LengthResult> before =
      evaluate(untrained,
               {{resolved.task, &resolved.reparam, kTinyLTest, kTinyEvalSamples, 20240601, {}}})[0];
  REQUIRE(again.size() == rows.size());
  double max_change = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("length " << i + 1);
    const double mse = std::stod(rows[i].at("mse"));
    CHECK(again[i].mse == doctest::Approx(mse).epsilon(1e-6));
    CHECK(again[i].mean_prediction ==
          doctest::Approx(std::stod(rows[i].at("mean_prediction"))).epsilon(1e-6));
    max_change = std::max(max_change, std::abs(before[i].mse - mse) / mse);
  }
  CHECK(max_change > 1e-3);  // training changed the model: the comparison above means something
}

TEST_CASE("the same seed gives bit-identical runs; another seed does not") {
  // Folder names of different lengths on purpose: the runs then see different heap layouts (the
  // paths and the command line are allocated before the model), which must not matter.
  const fs::path dir = fresh_dir("reproducible");
  auto args = [&](const std::string& name, const std::string& seed) {
    std::vector<std::string> a = tiny_args(dir / name);
    a.insert(a.end(), {"--pe", "rope", "--seed", seed});
    return a;
  };
  const std::vector<std::string> same = {"a", "bb", "dddd"};
  for (const std::string& name : same) REQUIRE(run_cli(args(name, "7")).rc == 0);
  REQUIRE(run_cli(args("other", "8")).rc == 0);
  for (const std::string file : {"results.csv", "loss.csv", "model.safetensors"}) {
    const std::string first = read_text(dir / same[0] / file);
    for (size_t i = 1; i < same.size(); ++i) {
      INFO(file << ": runs '" << same[0] << "' and '" << same[i] << "'");
      const bool identical = read_text(dir / same[i] / file) == first;
      CHECK(identical);
    }
    INFO(file << ": seeds 7 and 8");
    const bool differs = read_text(dir / "other" / file) != first;
    CHECK(differs);
  }
}

TEST_CASE("a diverging run exits 3 and records where, without results") {
  const fs::path out = fresh_dir("diverged") / "run";
  // lr 1e30: Adam's first step moves every weight by ~1e30, and the next forward overflows.
  const CliResult r = run_cli(
      {"train",     "--task",    "length", "--lr",      "1e30", "--clip",         "0",  "--warmup",
       "0",         "--steps",   "20",     "--d-model", "16",   "--n-head",       "2",  "--d-ff",
       "32",        "--l-train", "4",      "--l-test",  "8",    "--eval-samples", "20", "--out",
       out.string()});
  INFO("err: " << r.err);
  CHECK(r.rc == 3);
  const std::vector<std::string> err_lines = split(r.err, '\n');
  REQUIRE(!err_lines.empty());
  CHECK(err_lines.back().rfind("lenlab: error:", 0) == 0);
  CHECK(err_lines.back().find("--lr") != std::string::npos);

  const Json m = Json::parse(read_text(out / "manifest.json"));
  CHECK(m.at("status") == "diverged");
  const int at = m.at("diverged_at_step").get<int>();
  CHECK(at > 0);
  CHECK(at <= 20);
  CHECK(m.at("error").get<std::string>().find(std::to_string(at)) != std::string::npos);
  CHECK(!m.contains("final_train_loss"));
  // loss.csv holds the finite steps before the divergence.
  CHECK(read_csv(out / "loss.csv").size() == static_cast<size_t>(at - 1));
  CHECK(!fs::exists(out / "results.csv"));
  CHECK(!fs::exists(out / "model.safetensors"));
}

TEST_CASE("300 short steps on --task mean --pe nope learn far better than a constant") {
  // Small on purpose (one layer, batch 32) so the test stays quick under AddressSanitizer.
  const fs::path out = fresh_dir("learns") / "run";
  const CliResult r = run_cli(
      {"train", "--task",   "mean",      "--pe",      "nope", "--steps",   "300", "--batch",
       "32",    "--warmup", "50",        "--n-layer", "1",    "--d-model", "16",  "--n-head",
       "2",     "--d-ff",   "32",        "--l-train", "10",   "--l-test",  "10",  "--eval-samples",
       "20",    "--out",    out.string()});
  REQUIRE(r.rc == 0);
  // y = k/l with k ~ Binomial(l, 1/2), l uniform in 1..10: Var y = E[1/(4l)] = H_10 / 40 ≈ 0.0732,
  // the loss of the best constant prediction.
  double variance = 0;
  for (int l = 1; l <= 10; ++l) variance += 1.0 / (4.0 * l) / 10.0;
  const Json m = Json::parse(read_text(out / "manifest.json"));
  const double final_loss = m.at("final_train_loss").get<double>();
  const double test_mse = m.at("mean_test_mse_within_l_train").get<double>();
  // Measured: 1.8e-5 (seed 1; 4.9e-6..5.3e-5 over seeds 1-8), so 1e-3 leaves a factor of ~20 of
  // margin on the worst seed while staying 70x below the constant predictor.
  INFO("final train loss " << final_loss << ", test mse " << test_mse << ", constant predictor "
                           << variance);
  CHECK(final_loss < 1e-3);
  CHECK(final_loss < 0.1 * variance);
  CHECK(test_mse < 1e-3);  // the test loss within the training lengths agrees (1.5e-5 measured)
}

TEST_CASE("evaluate refuses lengths past a learned position table") {
  ModelConfig c;
  c.n_layer = 1;
  c.d_model = 8;
  c.n_head = 2;
  c.d_ff = 16;
  c.pe = PositionalEncoding::kLearned;
  c.max_positions = 6;  // BOS + 4 bits + EOS
  Transformer<float> model(c);
  model.init(3);
  const Reparam identity = Reparam::make("identity");
  const std::vector<LengthResult> ok =
      evaluate(model, {{TaskKind::kMean, &identity, 4, 8, 1, {}}})[0];
  CHECK(ok.size() == 4);
  CHECK_THROWS_WITH_AS(evaluate(model, {{TaskKind::kMean, &identity, 5, 8, 1, {}}}),
                       doctest::Contains("learned position table"), UsageError);
}
