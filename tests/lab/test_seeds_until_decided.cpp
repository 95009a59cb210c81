// `lenlab run --seeds-until-decided MAX` (lab/experiment/seeds_until_decided.hpp): the step rule,
// and a tiny experiment whose undecided comparison grows to MAX while the decided one stops.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/seeds_until_decided.hpp"
#include "lab/experiment/selection.hpp"
#include "tests/support/experiment_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

namespace {

// Two compared figures on tiny mean runs (l_train 3, lengths 1..6: one test range), which 150 steps
// fit inside 1..3 (the in-range gate lets every run in). In `differ` the method is NoPE and the
// baseline learned positions, whose untrained embeddings past l_train miss: the method wins in
// every seed. In `same` the two lines differ in their label only, so they share each seed's run:
// every difference is 0, never decided. The NoPE runs are the same runs in both figures (trained
// once).
const std::string kComparedConfig = R"(
seeds = [1, 2]
[defaults]
task = "mean"
l_train = 3
l_test = 6
steps = 150
)" + lenlab::test::kTinyModelToml + R"([figures.differ]
vary = "pe"
values = ["learned", "nope"]
baseline = "learned"
[figures.same]
vary = "settings"
values = [{ label = "a" }, { label = "b" }]
baseline = "a"
)";

ExperimentOptions compared_options(const fs::path& out, int max_seeds) {
  ExperimentOptions o = test::tiny_options(out);
  o.config_text = kComparedConfig;
  o.config_source = "compared.toml";
  o.seeds_until_decided = max_seeds;
  return o;
}

size_t count_runs(const fs::path& out) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(out / "runs")) n += e.is_directory();
  return n;
}

std::vector<uint64_t> seeds_from(uint64_t first, uint64_t last) {
  std::vector<uint64_t> s;
  for (uint64_t x = first; x <= last; ++x) s.push_back(x);
  return s;
}

}  // namespace

TEST_CASE("seeds until decided: the fewest seeds that can decide, then two a round, to the cap") {
  // 2^(1-n) · open tests < 0.05: n = 6 for one open test (1/32), 7 for two or three, 8 for four.
  CHECK(seeds_to_reach(0) == 6);
  CHECK(seeds_to_reach(1) == 6);
  CHECK(seeds_to_reach(2) == 7);
  CHECK(seeds_to_reach(3) == 7);
  CHECK(seeds_to_reach(4) == 8);
  CHECK(next_seed_count(3, 12, 2) == 7);    // straight to what can decide
  CHECK(next_seed_count(7, 12, 2) == 9);    // then two more
  CHECK(next_seed_count(11, 12, 2) == 12);  // never past the cap
  CHECK(next_seed_count(3, 5, 2) == 5);
  CHECK(seeds_extended({3, 1}, 5) == std::vector<uint64_t>{3, 1, 4, 5, 6});
  CHECK(seeds_extended({1, 2}, 2) == std::vector<uint64_t>{1, 2});
}

TEST_CASE("seeds until decided: an undecided comparison grows to the cap, a decided one stops") {
  const fs::path out = test::experiment_dir("seeds-until-decided");
  std::ostringstream log;
  ExperimentOptions o = compared_options(out, 9);
  o.log = &log;
  REQUIRE(run_experiment(o) == 0);
  const std::string said = log.str();
  INFO(said);
  // Round 1: both undecided on 2 seeds (2 open tests: 7 seeds can decide); round 2: `differ` is
  // decided on 7, `same` is not and takes 2 more, to the cap; then nothing below the cap is left.
  CHECK(said.find("seeds until decided, round 1: undecided differ (2 → 7 seeds), same (2 → 7 "
                  "seeds)\n") != std::string::npos);
  CHECK(said.find("seeds until decided, round 2: undecided same (7 → 9 seeds)\n") !=
        std::string::npos);
  CHECK(said.find("round 3") == std::string::npos);
  CHECK(said.find("seeds until decided: still undecided at the cap of 9 seeds: same (9 seeds)\n") !=
        std::string::npos);
  const Selection selection = read_selection(out / "selection.json");
  CHECK(selection.seeds == std::vector<uint64_t>{1, 2});
  CHECK(selection.grown_seeds.at("differ") == seeds_from(1, 7));
  CHECK(selection.grown_seeds.at("same") == seeds_from(1, 9));
  // differ: 2 lines × 7 seeds; same: its seeds 8 and 9 (1..7 are differ's NoPE runs).
  CHECK(count_runs(out) == 16);
  const std::string report = test::read_text(out / "report.md");
  CHECK(report.find("  - nope: **helps**: ") != std::string::npos);
  CHECK(report.find("better in 7/7 seeds") != std::string::npos);
  CHECK(report.find("  - b: **no detectable difference**: ") != std::string::npos);
  CHECK(report.find("the runs are identical seed by seed") != std::string::npos);
  // figsame.csv holds every seed: 1..9 (2 lines × 9 seeds × 6 lengths, plus the header).
  const std::string csv = test::read_text(out / "figsame.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * 9 * 6);

  // Again: every run is on disk, the rounds decide the same, nothing is trained.
  std::ostringstream again;
  o.log = &again;
  REQUIRE(run_experiment(o) == 0);
  CHECK(again.str().find(" 0 trained") != std::string::npos);
  CHECK(again.str().find("trained in") != std::string::npos);
  CHECK(again.str().find("round 2: undecided same (7 → 9 seeds)") != std::string::npos);
  CHECK(test::read_text(out / "report.md") == report);
  // lenlab plot reads the grown seeds from selection.json: the same report.
  REQUIRE(plot_experiment(out, o.plot, nullptr) == 0);
  CHECK(test::read_text(out / "report.md") == report);
}

TEST_CASE("seeds until decided: the config's key, the flag over it, and the dry run's most runs") {
  // Planned on seeds 1, 2: differ's 2 lines × 2 (same shares the NoPE runs). At 9 seeds:
  // 2 × 9 = 18, 14 more; at 7: 10 more.
  const std::string with_key = std::string("seeds_until_decided = 9\n") + kComparedConfig;
  ExperimentOptions o = compared_options("", 0);
  o.config_text = with_key;
  o.dry_run = true;
  o.cpu_speed = {50e9, 40e9};  // fixed rates instead of a measurement
  o.sgemm_peak = 100e9;
  std::ostringstream printed;
  o.print = &printed;
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("--seeds-until-decided 9: up to 14 more run(s)") != std::string::npos);
  o.seeds_until_decided = 7;
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("--seeds-until-decided 7: up to 10 more run(s)") != std::string::npos);
  // A cap below the seeds a compared figure runs, by the flag or the key.
  o.n_seeds = 8;
  CHECK_THROWS_WITH_AS(run_experiment(o),
                       doctest::Contains("--seeds-until-decided 7 is below the 8 seeds figure "
                                         "'differ' already runs; give at least 8"),
                       UsageError);
  o.seeds_until_decided = 0;
  o.n_seeds = 10;
  CHECK_THROWS_WITH_AS(
      run_experiment(o),
      doctest::Contains("compared.toml: seeds_until_decided = 9 is below the 10 seeds figure"),
      UsageError);
  // Only figures without a baseline selected: the key has nothing to do, the flag is refused.
  o.n_seeds = 0;
  o.config_text = with_key + "[figures.plain]\nvary = \"pe\"\nvalues = [\"nope\", \"alibi\"]\n";
  o.figures = {"plain"};
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("--seeds-until-decided") == std::string::npos);
  o.seeds_until_decided = 5;
  CHECK_THROWS_WITH_AS(run_experiment(o), doctest::Contains("no selected figure has a baseline"),
                       UsageError);
}
