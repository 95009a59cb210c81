// --until-fit and --validate on whole runs (train/until_fit.hpp, lab/run/group_validation.hpp): in
// a group on the CPU a stopped run keeps the weights it had at its stop while the group's other
// run trains on, and the manifest records every check; --validate's score is measured again by
// lenlab eval with the validation seed.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lab/run/device.hpp"
#include "lab/run/run_group.hpp"
#include "models/safetensors.hpp"
#include "results/in_range_fit.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/test_support.hpp"
#include "train/run_settings.hpp"
#include "train/until_fit.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

UntilFitSettings stop_when_fit(int every) {
  UntilFitSettings s;
  s.on = 1;
  s.patience = 0;
  s.every = every;
  return s;
}

// A checkpoint's tensors, names, shapes and values (models/safetensors.hpp), without its metadata
// (which holds the run's settings).
std::vector<NamedTensor> tensors(const fs::path& file) {
  return load_safetensors(file).tensors;
}

bool same(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].shape != b[i].shape || a[i].data != b[i].data) return false;
  return true;
}

}  // namespace

TEST_CASE("a run that stops keeps its weights at the stop while its group trains on") {
  // A constant learning rate, so that the first s steps of a run of --steps 2000 are a run of
  // --steps s: the stopped run's folder can be compared with a run trained for s steps. Parity at
  // l_train 8 fits within about a thousand steps here.
  const fs::path dir = fresh_dir("until_fit", "group");
  TrainSpec fits;
  fits.task = "parity";
  fits.l_train = 8;
  fits.l_test = 8;
  fits.steps = 2000;
  fits.batch_size = 32;
  fits.eval_samples = 32;
  fits.d_model = 32;
  fits.n_head = 2;
  fits.d_ff = 64;
  fits.optimizer.lr = 3e-3;
  fits.optimizer.warmup_steps = 0;
  fits.optimizer.min_lr_ratio = 1.0;
  fits.until_fit = stop_when_fit(50);
  TrainSpec plain = fits;  // no stop rule
  plain.until_fit = UntilFitSettings{};
  TrainSpec other = plain;  // another seed, beside it in the group
  other.seed = 2;

  const Device cpu = Device::choose("cpu");
  const auto group = [&](const std::string& name, const TrainSpec& a, const TrainSpec& b) {
    RunOptions o;
    o.device = "cpu";
    o.out = dir / name / "a";
    RunOptions p = o;
    p.out = dir / name / "b";
    REQUIRE(cpu.train({GroupJob(a, o), GroupJob(b, p)}) == std::vector<int>{kExitOk, kExitOk});
  };
  group("stops", fits, other);

  const Json m = Json::parse(read_text(dir / "stops" / "a" / "manifest.json"));
  REQUIRE(m.contains("until_fit"));
  const Json& u = m["until_fit"];
  REQUIRE(u["reason"] == "fit");
  const int stopped = u["stopped_step"].get<int>();
  CHECK(stopped > 0);
  CHECK(stopped < fits.steps);
  CHECK(stopped % 50 == 0);
  CHECK(u["steps_trained"] == stopped);
  CHECK(u["check_steps"].size() == static_cast<size_t>(stopped / 50));
  CHECK(u["check_values"].back().get<double>() >= kFitTokenAccuracy);
  for (size_t i = 0; i + 1 < u["check_values"].size(); ++i)
    CHECK(u["check_values"][i].get<double>() < kFitTokenAccuracy);
  CHECK(contains(u["rule"].get<std::string>(), "token accuracy ≥ 0.99 inside 1..8"));
  // loss.csv: a header and one row per step the run trained.
  const std::string loss = read_text(dir / "stops" / "a" / "loss.csv");
  CHECK(std::count(loss.begin(), loss.end(), '\n') == stopped + 1);
  CHECK_FALSE(Json::parse(read_text(dir / "stops" / "b" / "manifest.json")).contains("until_fit"));
  const std::optional<RunRecord> record = load_run(dir / "stops" / "a");
  REQUIRE(record);
  CHECK(record->stop_reason == "fit");
  CHECK(record->steps_trained == stopped);

  // The stopped run's weights are those after its stop: a group trained for that many steps.
  TrainSpec short_plain = plain, short_other = other;
  short_plain.steps = short_other.steps = stopped;
  group("short", short_plain, short_other);
  CHECK(same(tensors(dir / "stops" / "a" / "model.safetensors"),
             tensors(dir / "short" / "a" / "model.safetensors")));
  for (const std::string file : {"results.csv", "loss.csv"})
    CHECK(read_text(dir / "stops" / "a" / file) == read_text(dir / "short" / "a" / file));
  // Its neighbour trained every step, unchanged by the stop: as beside a run without the rule.
  group("neither", plain, other);
  for (const std::string file : {"model.safetensors", "results.csv", "loss.csv"})
    CHECK(read_text(dir / "stops" / "b" / file) == read_text(dir / "neither" / "b" / file));
}

TEST_CASE(
    "--validate records the trained model's in-range score on the validation sequences, "
    "which lenlab eval with the validation seed measures again") {
  const fs::path dir = fresh_dir("until_fit", "validate");
  const std::string run = (dir / "run").string(), again = (dir / "again").string();
  const CliResult trained = run_cli(
      {"train",   "--task",     "parity",        "--l-train", "6",        "--l-test", "8",
       "--steps", "300",        "--d-model",     "16",        "--n-head", "2",        "--d-ff",
       "32",      "--validate", "--fit-samples", "20",        "--out",    run});
  INFO(trained.err);
  REQUIRE(trained.rc == 0);
  const Json v = Json::parse(read_text(dir / "run" / "manifest.json"))["validation"];
  CHECK(v["lengths"] == Json::array({1, 6}));
  CHECK(v["samples"] == 20);
  const uint64_t seed = v["seed"].get<uint64_t>();
  CHECK(seed == validation_seed(TrainSpec{}.eval_seed));
  const CliResult measured = run_cli({"eval", run, "--lengths", "1..6", "--samples", "20",
                                      "--eval-seed", std::to_string(seed), "--out", again});
  INFO(measured.err);
  REQUIRE(measured.rc == 0);
  // results.csv: the mean of token_accuracy (the third column) over lengths 1..6.
  std::istringstream csv(read_text(dir / "again" / "results.csv"));
  std::string line;
  std::getline(csv, line);
  REQUIRE(contains(line, "length,depth,token_accuracy,"));
  double sum = 0;
  int n = 0;
  while (std::getline(csv, line)) {
    std::istringstream cells(line);
    std::string cell;
    for (int i = 0; i < 3; ++i) std::getline(cells, cell, ',');
    sum += std::stod(cell);
    ++n;
  }
  REQUIRE(n == 6);
  CHECK(v["value"].get<double>() == doctest::Approx(sum / n).epsilon(1e-12));
}
