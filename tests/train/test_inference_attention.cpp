// Inference-side attention methods through `lenlab eval` (train/inference_attention.hpp): the
// Λ-mask with a window covering every test sequence, a distance cap at or past every test distance
// and temperature 1 each give the plain evaluation; shorter ones change the long lengths only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "train/inference_attention.hpp"
#include "train/temperature_search.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// A folder name of this process's own: ctest runs each test case in its own process, two at a
// time, and every case trains the runs it needs.
std::string own(const std::string& name) {
  return fmt::format("test-time-{}-{}", ::getpid(), name);
}

// A small length-prediction run (l_train 4, tested to 8: sequences of up to 10 tokens) per PE,
// trained once for the whole file.
const fs::path& trained(const std::string& pe) {
  static std::map<std::string, fs::path> runs;
  if (!runs.count(pe)) {
    const fs::path out = run_dir(own("run-" + pe)) / "run";
    std::vector<std::string> args = tiny_args(out);
    *(std::find(args.begin(), args.end(), "--task") + 1) = "length";
    // Trained long enough for attention to depend on distance.
    *(std::find(args.begin(), args.end(), "--steps") + 1) = "100";
    args.insert(args.end(), {"--pe", pe});
    const CliResult r = run_cli(args);
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    runs[pe] = out;
  }
  return runs[pe];
}

// The evaluation's test MSE per length, with `flags`.
std::vector<double> mse(const std::string& pe, const std::vector<std::string>& flags) {
  static int n = 0;
  const fs::path out = run_dir(own("eval-" + std::to_string(n++)));
  std::vector<std::string> args = {"eval", trained(pe).string(), "--out", out.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  std::vector<double> v;
  for (const auto& row : read_csv(out / "results.csv")) v.push_back(std::stod(row.at("mse")));
  REQUIRE(v.size() == kTinyLTest);
  return v;
}

// a and b equal to float rounding (a masked or capped path sums in another order).
void check_close(const std::vector<double>& a, const std::vector<double>& b, int up_to) {
  for (int l = 1; l <= up_to; ++l) {
    CAPTURE(l);
    CHECK(a[l - 1] == doctest::Approx(b[l - 1]).epsilon(1e-5));
  }
}

// a and b differ at length l by more than float rounding could.
bool differs(const std::vector<double>& a, const std::vector<double>& b, int l) {
  return std::abs(a[l - 1] - b[l - 1]) > 1e-4 * std::abs(b[l - 1]);
}

}  // namespace

TEST_CASE(
    "test-time attention: a window covering every sequence and temperature 1 change nothing") {
  for (const char* pe : {"nope", "alibi", "rope"}) {
    CAPTURE(pe);
    const std::vector<double> plain = mse(pe, {});
    check_close(mse(pe, {"--n-local", "10"}), plain, kTinyLTest);  // length 8: 10 tokens
    check_close(mse(pe, {"--n-local", "10", "--n-global", "3"}), plain, kTinyLTest);
    CHECK(mse(pe, {"--temperature", "1"}) == plain);
    // The training window (l_train 4: 6 tokens) changes lengths 5..8 only.
    const std::vector<double> window = mse(pe, {"--n-local", "train"});
    check_close(window, plain, kTinyLTrain);
    CHECK(differs(window, plain, kTinyLTest));
    // A hotter softmax changes every length.
    const std::vector<double> hot = mse(pe, {"--temperature", "2"});
    for (int l = 1; l <= kTinyLTest; ++l) CHECK(differs(hot, plain, l));
  }
}

TEST_CASE("test-time attention: a distance cap equals the plain model within it, not beyond") {
  for (const char* pe : {"alibi", "rope"}) {
    CAPTURE(pe);
    const std::vector<double> plain = mse(pe, {});
    // Length 8 has distances up to 9: a cap of 9 changes nothing (RoPE then rotates inside
    // attention, by the same angles: equal to float rounding).
    check_close(mse(pe, {"--distance-cap", "9"}), plain, kTinyLTest);
    // The training distances (l_train 4: up to 5) bend lengths 5..8 only.
    const std::vector<double> capped = mse(pe, {"--distance-cap", "train"});
    check_close(capped, plain, kTinyLTrain);
    // Length 5 has one pair past the cap (EOS and BOS, 6 apart); length 8 has 10.
    CHECK(differs(capped, plain, kTinyLTest));
  }
}

TEST_CASE("test-time attention: the settings become an AttentionSpec, and eval.json records them") {
  TrainSpec spec;
  spec.task = "length";
  spec.l_train = 10;  // 12 tokens
  TestTimeAttention t;
  t.n_local = "train";
  t.n_global = 2;
  t.distance_cap = "train";
  t.temperature = "0.5";
  const AttentionSpec a = test_time_attention(t, spec, PositionalEncoding::kAlibi);
  CHECK(a.window.n_local == 12);
  CHECK(a.window.n_global == 2);
  CHECK(a.window.max_distance == 11);
  CHECK(a.logit_scale == 2.0);
  CHECK(a.scale_covers_bias);  // paper 002's temperature divides the whole logit
  TestTimeAttention content = t;
  content.temperature_scope = "content";
  CHECK_FALSE(test_time_attention(content, spec, PositionalEncoding::kAlibi).scale_covers_bias);
  t.n_local = "5";
  t.distance_cap = "7";
  CHECK(test_time_attention(t, spec, PositionalEncoding::kRope).window.n_local == 5);
  CHECK(test_time_attention(t, spec, PositionalEncoding::kRope).window.max_distance == 7);
  CHECK(test_time_attention({}, spec, PositionalEncoding::kLearned).logit_scale == 1.0);
  CHECK_THROWS_WITH_AS(test_time_attention(t, spec, PositionalEncoding::kLearned),
                       doctest::Contains("absolute position ids"), UsageError);

  const fs::path out = run_dir("test-time-json");
  const CliResult r = run_cli({"eval", trained("alibi").string(), "--out", out.string(),
                               "--n-local", "train", "--n-global", "1", "--distance-cap", "train"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto info = nlohmann::json::parse(read_text(out / "eval.json"));
  CHECK(info.at("attention").at("n_local") == 6);
  CHECK(info.at("attention").at("n_global") == 1);
  CHECK(info.at("attention").at("max_distance") == 5);
  CHECK(info.at("attention").at("temperature") == "1");
  CHECK(info.at("attention").at("temperature_scope") == "logit");
}

TEST_CASE(
    "test-time attention: settings without a meaning are refused before anything is written") {
  const fs::path out = run_dir("test-time-refused") / "out";
  const std::vector<std::pair<std::vector<std::string>, std::string>> rows = {
      {{"--distance-cap", "train"}, "nope, which has no positions, so no distances to cap"},
      {{"--n-local", "0"}, "--n-local must be 'train' (the tokens of a sequence at l_train: 6"},
      {{"--n-local", "4x"}, "--n-local must be 'train'"},
      {{"--n-global", "2"}, "--n-global 2 has no effect without --n-local"},
      {{"--n-global", "-1", "--n-local", "train"}, "--n-global must be >= 0, got -1"},
      {{"--temperature", "0"}, "--temperature must be a number from 0.001 to 1000"},
      {{"--temperature", "-2"}, "got '-2'"},
      {{"--temperature", "auto-max"}, "auto-pmax or auto-entropy"},
      {{"--temperature-scope", "content"},
       "--temperature-scope content has no effect at temperature 1"},
      {{"--temperature", "2", "--temperature-scope", "bias"},
       "--temperature-scope must be logit (the temperature divides q.k/sqrt(d) + the positional "
       "bias"},
  };
  for (const auto& [flags, message] : rows) {
    CAPTURE(message);
    std::vector<std::string> args = {"eval", trained("nope").string(), "--out", out.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliResult r = run_cli(args);
    check_one_error_line(r);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  const CliResult r =
      run_cli({"eval", trained("rope").string(), "--out", out.string(), "--distance-cap", "0"});
  CHECK(r.err.find("--distance-cap must be 'train' (the largest distance in training: 5") !=
        std::string::npos);
}

TEST_CASE(
    "temperature search: recovers a known temperature on synthetic logits, by either statistic") {
  // Rows of training logits, and "long" rows whose logits are the same divided by 0.75: dividing
  // those by τ gives the training distributions exactly at τ = 0.75.
  Rng rng(4);
  std::vector<std::vector<double>> rows(20, std::vector<double>(12));
  for (auto& r : rows)
    for (double& x : r) x = 2.0 * rng.normal();
  const auto stats = [&](double scale) {  // mean (entropy, largest probability) at logits·scale
    AttentionStats s;
    s.n_layer = s.n_head = 1;
    double e = 0, m = 0;
    for (const auto& r : rows) {
      double norm = 0, top = 0;
      for (double x : r) norm += std::exp(x * scale);
      for (double x : r) {
        const double p = std::exp(x * scale) / norm;
        e -= p * std::log(p) / rows.size();
        top = std::max(top, p);
      }
      m += top / rows.size();
    }
    s.entropy = {e};
    s.max_prob = {m};
    return s;
  };
  for (AlignBy by : {AlignBy::kMaxProb, AlignBy::kEntropy}) {
    CAPTURE(align_name(by));
    const double target = mean_statistic(stats(1.0), by);
    const auto statistic = [&](double tau) { return mean_statistic(stats(0.75 / tau), by); };
    CHECK(closest_temperature(temperature_grid(), statistic, target) == doctest::Approx(0.75));
  }
  CHECK(temperature_grid().size() == 11);
  CHECK(temperature_grid().back() == doctest::Approx(0.5));
}

TEST_CASE(
    "the search's grid runs from 1 to its lowest value, and a match outside it sits at a bound") {
  CHECK(temperature_grid(0.5, 0.05).size() == 11);
  const std::vector<double> g = temperature_grid(0.3, 0.25);  // 1, 0.75, 0.5, then 0.3 itself
  REQUIRE(g.size() == 4);
  CHECK(g[1] == doctest::Approx(0.75));
  CHECK(g.back() == 0.3);
  CHECK(temperature_grid(1.0, 0.1) == std::vector<double>{1.0});
  CHECK(temperature_grid(0.2, 0.2).back() == 0.2);  // 1 − 4·0.2 is 0.2 up to rounding: no twin
  CHECK(temperature_grid(0.2, 0.2).size() == 5);
  CHECK_THROWS_AS(temperature_grid(0.0, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(temperature_grid(0.5, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(temperature_grid(1e-6, 1e-6), std::invalid_argument);
  // A statistic that is τ itself: a target inside the grid is matched inside it; targets below
  // its lowest value or above 1 are matched at the bound, and flagged so.
  const std::vector<double> grid = temperature_grid(0.5, 0.1);
  const auto identity = [](double tau) { return tau; };
  for (const auto& [target, tau, bound] :
       {std::tuple{0.72, 0.7, ""}, std::tuple{0.2, 0.5, "low"}, std::tuple{1.3, 1.0, "high"}}) {
    CAPTURE(target);
    const double chosen = closest_temperature(grid, identity, target);
    CHECK(chosen == doctest::Approx(tau));
    CHECK(grid_bound(grid, chosen) == std::string(bound));
    CHECK(chosen >= grid.back());
    CHECK(chosen <= grid.front());
  }
  CHECK(temperature_log_rule(10, 100) == doctest::Approx(0.5));
  CHECK(std::isnan(temperature_log_rule(1, 100)));
}

TEST_CASE("the temperature search's curve: every grid τ at every length, its bounds flagged") {
  const fs::path out = run_dir("test-time-curve");
  const CliResult r =
      run_cli({"eval", trained("rope").string(), "--out", out.string(), "--temperature",
               "auto-entropy", "--temperature-min", "0.8", "--temperature-step", "0.1"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto info = nlohmann::json::parse(read_text(out / "eval.json"));
  const auto& search = info.at("attention").at("temperature_search");
  CHECK(search.at("grid").size() == 3);  // 1, 0.9, 0.8
  const auto& curve = search.at("curve");
  REQUIRE(curve.size() == 3 * (kTinyLTest - kTinyLTrain));
  for (const auto& p : curve) {
    CHECK(p.at("length").get<int>() > kTinyLTrain);
    CHECK(p.at("tau").get<double>() >= 0.8 - 1e-12);
    CHECK(p.at("mse").get<double>() >= 0);
    CHECK(p.at("attention_entropy").get<double>() >= 0);
  }
  const auto& taus = info.at("attention").at("temperature_by_length");
  for (int l = kTinyLTrain + 1; l <= kTinyLTest; ++l) {
    const std::string key = std::to_string(l);
    const double tau = taus.at(key);
    CHECK(tau >= 0.8 - 1e-12);
    CHECK(search.at("chosen").at("auto-entropy").at(key).get<double>() == tau);
    // At a bound exactly when the chosen τ is 1 or 0.8; the flag says which.
    const std::string bound = search.at("at_bound").value(key, "");
    CHECK(bound == (tau == 1.0 ? "high" : std::abs(tau - 0.8) < 1e-12 ? "low" : ""));
    CHECK(search.at("chosen").at("log_rule").at(key).get<double>() < 1);
  }
}

TEST_CASE("lenlab eval --temperature auto-pmax: one grid temperature per length past l_train") {
  for (const char* by : {"auto-pmax", "auto-entropy"}) {
    CAPTURE(by);
    const fs::path out = run_dir(std::string("test-time-") + by);
    const CliResult r =
        run_cli({"eval", trained("rope").string(), "--out", out.string(), "--temperature", by});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    const auto info = nlohmann::json::parse(read_text(out / "eval.json"));
    const auto& taus = info.at("attention").at("temperature_by_length");
    REQUIRE(taus.size() == kTinyLTest - kTinyLTrain);  // lengths 5..8
    for (int l = kTinyLTrain + 1; l <= kTinyLTest; ++l) {
      const double tau = taus.at(std::to_string(l));
      CHECK(tau >= 0.5 - 1e-12);
      CHECK(tau <= 1.0 + 1e-12);
      CHECK(std::abs(tau * 20 - std::round(tau * 20)) < 1e-9);  // on the 0.05 grid
    }
    // The training lengths keep temperature 1: their results are the plain evaluation's.
    std::vector<double> got;
    for (const auto& row : read_csv(out / "results.csv")) got.push_back(std::stod(row.at("mse")));
    const std::vector<double> plain = mse("rope", {});
    for (int l = 1; l <= kTinyLTrain; ++l) CHECK(got[l - 1] == plain[l - 1]);
  }
}

TEST_CASE(
    "temperature scope: the two scopes differ on a bias, and every id with a temperature names its "
    "scope") {
  // ALiBi: the scope matters; the content-only variant is another evaluation.
  const std::vector<double> plain = mse("alibi", {});
  const std::vector<double> logit = mse("alibi", {"--temperature", "0.5"});
  const std::vector<double> content =
      mse("alibi", {"--temperature", "0.5", "--temperature-scope", "content"});
  CHECK(mse("alibi", {"--temperature", "0.5", "--temperature-scope", "logit"}) == logit);
  for (int l = 1; l <= kTinyLTest; ++l) {
    CHECK(differs(logit, plain, l));
    CHECK(differs(content, logit, l));
  }
  // RoPE has no bias: one computation under either name.
  CHECK(mse("rope", {"--temperature", "0.5", "--temperature-scope", "content"}) ==
        mse("rope", {"--temperature", "0.5"}));

  // The manifest and the id: the scope is written whenever a temperature is, at either value, so
  // that no run from before the setting (whose temperature divided q·k alone, and whose id has no
  // scope) shares an id with a run of either scope.
  TrainSpec spec;
  CHECK_FALSE(to_json(spec).contains("temperature_scope"));
  spec.test_attention.temperature = "auto-pmax";
  CHECK(to_json(spec).at("temperature_scope") == "logit");
  TrainSpec variant = spec;
  variant.test_attention.temperature_scope = "content";
  CHECK(to_json(variant).at("temperature_scope") == "content");
  CHECK(run_id(spec) != run_id(variant));

  // A run trained with a temperature records its scope; a manifest without one (written before
  // the setting existed) reads back as the content-only variant it ran.
  const fs::path out = run_dir(own("scope-run")) / "run";
  std::vector<std::string> args = tiny_args(out);
  args.insert(args.end(), {"--pe", "alibi", "--temperature", "0.5"});
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  nlohmann::ordered_json manifest = nlohmann::ordered_json::parse(read_text(out / "manifest.json"));
  CHECK(manifest.at("config").at("temperature_scope") == "logit");
  REQUIRE(load_run(out).has_value());
  CHECK(load_run(out)->spec.test_attention.temperature_scope == "logit");
  manifest.at("config").erase("temperature_scope");
  write_raw(out / "manifest.json", manifest.dump(2));
  CHECK(load_run(out)->spec.test_attention.temperature_scope == "content");
}

TEST_CASE(
    "yarn names its ramp's bounds in every id, and a manifest from before reads as yarn-paper") {
  // Runs recorded as yarn before the field's ramp became yarn ran the paper's ramp, and their ids
  // hold no bounds: every yarn run's id now names them, test-time or trained with it, so no new
  // yarn run shares an earlier one's id.
  TrainSpec spec;
  spec.pe = "rope";
  CHECK_FALSE(to_json(spec).contains("yarn_alpha"));
  for (const char* key : {"rope_scaling", "train_rope_scaling"}) {
    CAPTURE(key);
    TrainSpec yarn = spec, paper = spec;
    (std::string(key) == "rope_scaling" ? yarn.test_attention.rope_scaling
                                        : yarn.train_rope_scaling) = "yarn";
    (std::string(key) == "rope_scaling" ? paper.test_attention.rope_scaling
                                        : paper.train_rope_scaling) = "yarn-paper";
    CHECK(to_json(yarn).at("yarn_alpha") == 1.0);
    CHECK(to_json(yarn).at("yarn_beta") == 32.0);
    CHECK_FALSE(to_json(paper).contains("yarn_alpha"));
  }
  CHECK_FALSE(to_json([] {
                TrainSpec s;
                s.test_attention.rope_scaling = "pi";
                return s;
              }())
                  .contains("yarn_alpha"));

  const fs::path out = run_dir(own("yarn-run")) / "run";
  std::vector<std::string> args = tiny_args(out);
  args.insert(args.end(), {"--pe", "rope", "--rope-scaling", "yarn", "--rope-factor", "2"});
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  REQUIRE(load_run(out).has_value());
  CHECK(load_run(out)->spec.test_attention.rope_scaling == "yarn");
  nlohmann::ordered_json manifest = nlohmann::ordered_json::parse(read_text(out / "manifest.json"));
  manifest.at("config").erase("yarn_alpha");
  manifest.at("config").erase("yarn_beta");
  write_raw(out / "manifest.json", manifest.dump(2));
  CHECK(load_run(out)->spec.test_attention.rope_scaling == "yarn-paper");
}
