// Test-time attention as run settings (config keys n_local, n_global, distance_cap, temperature,
// attention_stats; train/inference_settings.hpp): a sweep trains the lines that differ only there
// once (lab/run/run_group_impl.hpp), and evaluates each as `lenlab eval` would with the same flags,
// to the byte. Also the config's vary = "settings" lines and their mistakes.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

std::string own(const std::string& name) {
  return fmt::format("shared-training-{}-{}", ::getpid(), name);
}

// The tiny run's settings (tests/support/cli_support.hpp) at 100 steps, RoPE, length prediction.
constexpr const char* kDefaults = R"(seeds = [1]
[defaults]
task = "length"
pe = "rope"
steps = 100
l_train = 4
l_test = 8
eval_samples = 20
d_model = 16
n_head = 2
d_ff = 32
)";

std::vector<std::string> tiny_rope_args(const fs::path& out) {
  std::vector<std::string> args = tiny_args(out);
  *(std::find(args.begin(), args.end(), "--task") + 1) = "length";
  *(std::find(args.begin(), args.end(), "--steps") + 1) = "100";
  args.insert(args.end(), {"--pe", "rope"});
  return args;
}

nlohmann::json manifest(const fs::path& run) {
  return nlohmann::json::parse(read_text(run / "manifest.json"));
}

// `lenlab run` of `config_text` into dir/sweep: its run folders, each completed and one of
// `sharing` runs that share one training, keyed by label_of(the run's config).
std::map<std::string, fs::path> sweep_runs(
    const fs::path& dir, const std::string& config_text, int sharing,
    const std::function<std::string(const nlohmann::json&)>& label_of) {
  const fs::path config = dir / "config.toml";
  write_raw(config, config_text);
  const fs::path out = dir / "sweep";
  const CliResult swept = run_cli({"run", config.string(), "--out", out.string()});
  REQUIRE_MESSAGE(swept.rc == 0, swept.err);
  std::map<std::string, fs::path> runs;
  for (const auto& e : fs::directory_iterator(out / "runs")) {
    const nlohmann::json m = manifest(e.path());
    CHECK(m.at("status") == "completed");
    CHECK(m.at("runs_sharing_training") == sharing);
    const std::string label = label_of(m.at("config"));
    CHECK(runs.count(label) == 0);
    runs[label] = e.path();
  }
  REQUIRE(runs.size() == static_cast<size_t>(sharing));
  return runs;
}

}  // namespace

TEST_CASE(
    "lines that differ only in test-time attention share one training, and evaluate as lenlab eval "
    "does") {
  const fs::path dir = run_dir(own("sweep"));
  const fs::path plain = dir / "plain";
  const CliResult trained = run_cli(tiny_rope_args(plain));
  REQUIRE_MESSAGE(trained.rc == 0, trained.err);

  // Each line's run folder, by its test-time settings.
  const std::string figure = R"([figures.t]
title = "test-time attention"
vary = "settings"
values = [
  { label = "plain" },
  { label = "lambda", n_local = "train", n_global = 1 },
  { label = "cap", distance_cap = "train", attention_stats = 1 },
  { label = "tau", temperature = "auto-pmax" },
]
)";
  const auto label_of = [](const nlohmann::json& c) -> std::string {
    return c.contains("n_local")        ? "lambda"
           : c.contains("distance_cap") ? "cap"
           : c.contains("temperature")  ? "tau"
                                        : "plain";
  };
  std::map<std::string, fs::path> runs =
      sweep_runs(dir, std::string(kDefaults) + figure, 4, label_of);

  // One training: every run's loss curve is the separately trained run's, to the byte.
  for (const auto& [label, run] : runs) {
    CAPTURE(label);
    CHECK(read_text(run / "loss.csv") == read_text(plain / "loss.csv"));
  }
  CHECK(read_text(runs["plain"] / "results.csv") == read_text(plain / "results.csv"));

  // Each variant's evaluation is lenlab eval's with the same flags, to the byte.
  const auto eval = [&](const std::string& name, std::vector<std::string> flags) {
    const fs::path e = dir / ("eval-" + name);
    std::vector<std::string> args = {"eval", plain.string(), "--out", e.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliResult r = run_cli(args);
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    return e;
  };
  const fs::path lambda = eval("lambda", {"--n-local", "train", "--n-global", "1"});
  CHECK(read_text(runs["lambda"] / "results.csv") == read_text(lambda / "results.csv"));
  const fs::path cap = eval("cap", {"--distance-cap", "train", "--attention-stats"});
  CHECK(read_text(runs["cap"] / "results.csv") == read_text(cap / "results.csv"));
  REQUIRE(fs::exists(runs["cap"] / "attention.csv"));
  CHECK(read_text(runs["cap"] / "attention.csv") == read_text(cap / "attention.csv"));
  CHECK_FALSE(fs::exists(runs["plain"] / "attention.csv"));
  const fs::path tau = eval("tau", {"--temperature", "auto-pmax"});
  CHECK(read_text(runs["tau"] / "results.csv") == read_text(tau / "results.csv"));
  const nlohmann::json searched = nlohmann::json::parse(read_text(tau / "eval.json"))
                                      .at("attention")
                                      .at("temperature_by_length");
  CHECK(manifest(runs["tau"]).at("temperature_by_length") == searched);
  // And the whole search (grid, bounds, each criterion's τ, the curve) the same, read back.
  CHECK(
      manifest(runs["tau"]).at("temperature_search") ==
      nlohmann::json::parse(read_text(tau / "eval.json")).at("attention").at("temperature_search"));
  const std::optional<RunRecord> record = load_run(runs["tau"]);
  REQUIRE(record);
  CHECK(record->temperature_curve.size() == 11 * (kTinyLTest - kTinyLTrain));
  CHECK(record->temperature_chosen.at("auto-pmax").size() == kTinyLTest - kTinyLTrain);
  for (const auto& [length, tau] : record->temperature_by_length) {
    CHECK(record->temperature_chosen.at("auto-pmax").at(length) == tau);
    CHECK(record->temperature_at_bound.count(length) == (tau == 1.0 || tau == 0.5 ? 1u : 0u));
  }
  CHECK(searched.size() == kTinyLTest - kTinyLTrain);

  // The variants do change the evaluation past l_train (else the byte checks above prove little).
  CHECK(read_text(runs["lambda"] / "results.csv") != read_text(plain / "results.csv"));
  CHECK(read_text(runs["cap"] / "results.csv") != read_text(plain / "results.csv"));
}

TEST_CASE("a figure's vary = settings lines: labels, settings, and each mistake named") {
  const auto parse = [](const std::string& figure) {
    return parse_experiment_config(std::string(kDefaults) + "[figures.f]\n" + figure, "c.toml");
  };
  const ExperimentConfig c = parse(R"(vary = "settings"
values = [{ label = "plain" }, { label = "Λ + cap", n_local = "train", n_global = 1, distance_cap = "3" }]
)");
  const FigureSpec& f = c.figures.at(0);
  REQUIRE(f.n_lines() == 2);
  CHECK(f.line_label(0) == "plain");
  CHECK(f.line_label(1) == "Λ + cap");
  CHECK(f.line_spec(0, 1).test_attention.plain());
  const TrainSpec s = f.line_spec(1, 7);
  CHECK(s.test_attention.n_local == "train");
  CHECK(s.test_attention.n_global == 1);
  CHECK(s.test_attention.distance_cap == "3");
  CHECK(s.seed == 7);
  CHECK(training_spec_text(s) == training_spec_text(f.line_spec(0, 7)));
  CHECK(canonical_spec_text(s) != canonical_spec_text(f.line_spec(0, 7)));

  const auto refused = [&](const std::string& figure, const std::string& says) {
    CAPTURE(figure);
    try {
      parse(figure);
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
    }
  };
  refused("vary = \"settings\"\nvalues = [\"plain\"]\n", "value 1 is not a table");
  refused("vary = \"settings\"\nvalues = [{ n_local = \"train\" }]\n",
          "needs a non-empty string 'label'");
  refused("vary = \"settings\"\nvalues = [{ label = \"a\" }, { label = \"a\" }]\n",
          "two lines are labelled 'a'");
  refused("vary = \"settings\"\nvalues = [{ label = \"a\", n_locl = \"train\" }]\n",
          "unknown setting 'n_locl'");
  refused("vary = \"settings\"\nvalues = [{ label = \"a\", n_local = 4 }]\n",
          "'n_local' must be a string");
}

TEST_CASE(
    "T5 lines with distance_cap trained share the plain line's training and evaluate as lenlab "
    "eval --distance-cap trained does") {
  const fs::path dir = run_dir(own("t5-trained"));
  const fs::path plain = dir / "plain";
  std::vector<std::string> args = tiny_rope_args(plain);
  *(std::find(args.begin(), args.end(), "--pe") + 1) = "t5";
  const CliResult trained = run_cli(args);
  REQUIRE_MESSAGE(trained.rc == 0, trained.err);

  std::string defaults = kDefaults;
  defaults.replace(defaults.find("pe = \"rope\""), 11, "pe = \"t5\"");
  const std::string figure = R"([figures.t]
title = "T5's untrained buckets"
vary = "settings"
values = [
  { label = "plain" },
  { label = "trained buckets", distance_cap = "trained" },
  { label = "trained buckets + tau", distance_cap = "trained", temperature = "auto-pmax" },
]
)";
  const auto label_of = [](const nlohmann::json& c) -> std::string {
    return c.contains("temperature") ? "tau" : c.contains("distance_cap") ? "trained" : "plain";
  };
  std::map<std::string, fs::path> runs = sweep_runs(dir, defaults + figure, 3, label_of);
  CHECK(read_text(runs["plain"] / "results.csv") == read_text(plain / "results.csv"));
  CHECK(read_text(runs["plain"] / "untrained_bias.csv") == read_text(plain / "untrained_bias.csv"));
  // The cap each run resolved on its own model, as lenlab eval resolves it on the plain run's.
  const fs::path e = dir / "eval-trained";
  const CliResult r =
      run_cli({"eval", plain.string(), "--out", e.string(), "--distance-cap", "trained"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const int cap =
      nlohmann::json::parse(read_text(e / "eval.json")).at("attention").at("max_distance");
  CHECK(cap == 5);  // length task, l_train 4: distances 0..5 trained
  for (const char* line : {"trained", "tau"}) {
    CAPTURE(line);
    CHECK(manifest(runs[line]).at("distance_cap_applied") == cap);
  }
  CHECK(read_text(runs["trained"] / "results.csv") == read_text(e / "results.csv"));
  CHECK(read_text(runs["trained"] / "untrained_bias.csv") == read_text(e / "untrained_bias.csv"));
}
