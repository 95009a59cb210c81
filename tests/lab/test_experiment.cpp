// Experiment configs, run planning, experiment folders (sweeps: test_sweep.cpp; their
// predicted time: test_dry_run.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "cost/run_cost.hpp"
#include "cost/time_model.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/run/run_group.hpp"
#include "lab/run/run_train.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/experiment_support.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

namespace {

using lenlab::test::kTinyConfig;
using lenlab::test::read_text;
using lenlab::test::tiny_options;
fs::path fresh_dir(const std::string& name) {
  return lenlab::test::experiment_dir(name);
}

// The UsageError a config's text gets, or "no error".
std::string error_of(const std::string& text) {
  try {
    parse_experiment_config(text, "bad.toml");
  } catch (const UsageError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

}  // namespace

TEST_CASE("experiment config: figures expand to the right runs, shared runs once") {
  const ExperimentConfig c = parse_experiment_config(kTinyConfig, "tiny.toml");
  REQUIRE(c.figures.size() == 2);
  CHECK(c.figures[0].name == "p");
  CHECK(c.figures[0].base.steps == 150);
  CHECK(c.figures[0].line_spec(1, 7).pe == "alibi");
  CHECK(c.figures[0].line_spec(1, 7).seed == 7);
  const auto runs = plan_runs(c, {}, c.seeds);
  CHECK(runs.size() == 6);  // (nope, alibi, sqrt) × 2 seeds; identity/nope is shared
  const auto only_r = plan_runs(c, {"r"}, {1, 2, 3});
  CHECK(only_r.size() == 6);
  for (const auto& r : only_r) CHECK(r.spec.pe == "nope");
  // The id is stable and names the run.
  CHECK(runs[0].id == run_id(runs[0].spec));
  CHECK(runs[0].id.rfind("length-nope-identity-L3-s1-", 0) == 0);
}

TEST_CASE("a run's id fits a folder name whatever the reparameterization's length") {
  // A valid 1000-byte expression once made a 1000-byte folder name: the sweep failed on it.
  TrainSpec a, b;
  a.reparam = "sqrt(x" + std::string(200, ' ') + "+ 1)";
  b.reparam = "sqrt(x" + std::string(200, ' ') + "+ 2)";
  CHECK(run_id(a).size() < 200);
  CHECK(run_id(a).rfind("length-nope-sqrt_x_____", 0) == 0);
  CHECK(run_id(a) != run_id(b));  // cut alike, told apart by the hash
  TrainSpec plain;
  plain.reparam = "sqrt";
  CHECK(run_id(plain).rfind("length-nope-sqrt-L", 0) == 0);
}

TEST_CASE("the built-in paper config has every figure of the paper") {
  const ExperimentConfig c = parse_experiment_config(paper_config_text(), "paper.toml");
  CHECK(c.figure_names() ==
        std::vector<std::string>{"1a", "1b", "1c", "3a", "3b", "4a", "4b", "5"});
  CHECK(c.seeds == std::vector<uint64_t>{1, 2, 3});
  for (const PlannedRun& r : plan_runs(c, {}, c.seeds)) CHECK_NOTHROW(resolve(r.spec));
  CHECK(c.find("4b")->line_spec(2, 1).reparam == "log");
  CHECK(c.find("4b")->line_spec(2, 1).reparam_shift == 1.0);
  CHECK(c.find("3a")->line_spec(3, 1).l_train == 20);
}

TEST_CASE(
    "on the GPU, runs train together exactly when they share a model shape, encoding and its "
    "settings") {
  // What may differ inside a group: everything a model of fixed shape can be trained on.
  TrainSpec a;
  TrainSpec b = a;
  b.task = "sum";
  b.reparam = "invsqrt";
  b.reparam_shift = 1;
  b.l_train = 20;
  b.l_test = 80;  // NoPE has no position table
  b.seed = 9;
  b.optimizer.lr = 3e-4;
  b.eval_samples = 100;
  CHECK(gpu_group_key(a) == gpu_group_key(b));
  // What may not: the parameter layout or the lockstep schedule.
  for (auto change : std::vector<std::function<void(TrainSpec&)>>{
           [](TrainSpec& s) { s.pe = "rope"; }, [](TrainSpec& s) { s.d_model = 32; },
           [](TrainSpec& s) { s.n_layer = 3; }, [](TrainSpec& s) { s.n_head = 2; },
           [](TrainSpec& s) { s.d_ff = 128; }, [](TrainSpec& s) { s.steps = 10; },
           [](TrainSpec& s) { s.batch_size = 32; },
           [](TrainSpec& s) { s.task = "copy"; }}) {  // a token task: its vocabulary and head
    TrainSpec c = a;
    change(c);
    CHECK(gpu_group_key(c) != gpu_group_key(a));
  }
  // Within an encoding, its settings fix the computation (and FIRE's threshold starts at the
  // training window), and so does the precision.
  const std::vector<std::pair<std::function<void(TrainSpec&)>, std::function<void(TrainSpec&)>>>
      settings = {
          {[](TrainSpec& s) { s.pe = "rope"; }, [](TrainSpec& s) { s.rope_base = 500; }},
          {[](TrainSpec& s) { s.pe = "t5"; }, [](TrainSpec& s) { s.t5_buckets = 16; }},
          {[](TrainSpec& s) { s.pe = "t5"; }, [](TrainSpec& s) { s.t5_max_distance = 64; }},
          {[](TrainSpec& s) { s.pe = "t5"; }, [](TrainSpec& s) { s.t5_per_layer = 1; }},
          {[](TrainSpec& s) {
             s.pe = "bias";
             s.pe_bias = "-d";
           },
           [](TrainSpec& s) { s.pe_bias = "-2*d"; }},
          {[](TrainSpec& s) { s.pe = "fire"; }, [](TrainSpec& s) { s.l_train = 20; }},
          {[](TrainSpec& s) { s.pe = "fire"; }, [](TrainSpec& s) { s.fire_width = 16; }},
          {[](TrainSpec& s) { s.pe = "fire"; }, [](TrainSpec& s) { s.fire_threshold = "30"; }},
          {[](TrainSpec& s) { s.pe = "rope"; }, [](TrainSpec& s) { s.train_rope_scaling = "pi"; }},
          {[](TrainSpec& s) {
             s.pe = "rope";
             s.train_rope_scaling = "yarn";
           },
           [](TrainSpec& s) { s.train_rope_factor = 2; }},
          {[](TrainSpec&) {}, [](TrainSpec& s) { s.precision = "float64"; }}};
  for (const auto& [encoding, change] : settings) {
    TrainSpec c = a;
    encoding(c);
    TrainSpec d = c;
    change(d);
    CHECK(gpu_group_key(c) != gpu_group_key(d));
  }
  TrainSpec t5 = a, t5_other = b;  // what may differ still may: task, reparam, l_train, seed, ...
  t5.pe = t5_other.pe = "t5";
  CHECK(gpu_group_key(t5) == gpu_group_key(t5_other));
  // A learned table has l_test + 2 rows: other l_test, other layout.
  TrainSpec l1 = a, l2 = a;
  l1.pe = l2.pe = "learned";
  l2.l_test = 60;
  CHECK(gpu_group_key(l1) != gpu_group_key(l2));
  // Token tasks: one vocabulary and head, one group; another vocabulary, another group; copy's
  // learned table has 2·l_test + 2 rows, parity's l_test + 3.
  TrainSpec copy = a, reverse = a, parity = a;
  copy.task = "copy";
  reverse.task = "reverse";
  parity.task = "parity";
  CHECK(gpu_group_key(copy) == gpu_group_key(reverse));
  CHECK(gpu_group_key(copy) != gpu_group_key(parity));  // 6 tokens, not 20
  reverse.token.n_symbols = 8;
  CHECK(gpu_group_key(copy) != gpu_group_key(reverse));
  copy.pe = parity.pe = "learned";
  parity.token.n_symbols = 2;  // parity has 6 tokens whatever n_symbols says
  CHECK(gpu_group_key(copy) != gpu_group_key(parity));
  // The paper's reproduction: one group per positional encoding.
  const ExperimentConfig config = parse_experiment_config(paper_config_text(), "paper");
  std::set<std::string> keys;
  for (const PlannedRun& r : plan_runs(config, {}, {1, 2, 3})) keys.insert(gpu_group_key(r.spec));
  CHECK(keys.size() == 4);
}

TEST_CASE("experiment config: mistakes are named") {
  const std::string head = "seeds = [1]\n[figures.x]\nvary = \"pe\"\nvalues = [\"nope\"]\n";
  CHECK(error_of(head + "stepz = 3\n").find("unknown setting 'stepz'") != std::string::npos);
  CHECK(error_of(head + "steps = \"many\"\n").find("'steps' must be an integer") !=
        std::string::npos);
  CHECK(error_of(head + "lr = \"fast\"\n").find("'lr' must be a finite number") !=
        std::string::npos);
  CHECK(error_of("seeds = [1]\ncolour = 3\n" + head.substr(12)).find("unknown key 'colour'") !=
        std::string::npos);
  CHECK(error_of("seeds = [1]\n[figures.x]\nvary = \"pez\"\nvalues = [\"nope\"]\n")
            .find("unknown setting 'pez'") != std::string::npos);
  CHECK(error_of("seeds = [1]\n[figures.x]\nvalues = [1]\n").find("needs 'vary'") !=
        std::string::npos);
  CHECK(error_of("seeds = [1\n").find("bad.toml:") != std::string::npos);
  CHECK(error_of("[figures.x]\nvary = \"pe\"\nvalues = [\"nope\"]\n").find("'seeds'") !=
        std::string::npos);
  const ExperimentConfig c = parse_experiment_config(kTinyConfig, "tiny.toml");
  CHECK_THROWS_WITH_AS(plan_runs(c, {"9z"}, {1}), doctest::Contains("unknown figure '9z'"),
                       UsageError);
}

TEST_CASE("--figures takes a group: a name that is no figure selects every figure named NAME-...") {
  const std::string fig = "vary = \"pe\"\nvalues = [\"nope\"]\n";
  const ExperimentConfig c =
      parse_experiment_config("seeds = [1]\n[figures.g-b]\n" + fig + "[figures.g-a]\n" + fig +
                                  "[figures.g]\n" + fig + "[figures.gx]\n" + fig,
                              "groups.toml");
  CHECK(select_figures(c, {}).empty());
  // "g" is a figure itself, so it names only that one; "g-" groups need a name that is none.
  CHECK(select_figures(c, {"g"}) == std::vector<std::string>{"g"});
  CHECK(select_figures(c, {"gx", "g-b"}) == std::vector<std::string>{"gx", "g-b"});
  const ExperimentConfig d = parse_experiment_config(
      "seeds = [1]\n[figures.g-b]\n" + fig + "[figures.g-a]\n" + fig + "[figures.gx]\n" + fig,
      "groups.toml");
  CHECK(select_figures(d, {"g"}) == std::vector<std::string>{"g-a", "g-b"});
  CHECK(select_figures(d, {"g-a", "g"}) == std::vector<std::string>{"g-a", "g-b"});
  CHECK_THROWS_WITH_AS(select_figures(d, {"h"}),
                       doctest::Contains("unknown figure 'h' (nor a group: no figure is named "
                                         "'h-…'); valid figures: 'g-a', 'g-b' or 'gx'"),
                       UsageError);
}

TEST_CASE("a figure's own seeds replace the experiment's for its lines, and --seeds N drops them") {
  const std::string fig = "vary = \"pe\"\nvalues = [\"nope\", \"alibi\"]\n";
  ExperimentConfig c = parse_experiment_config(
      "seeds = [1, 2]\n[figures.a]\n" + fig + "seeds = [3, 4, 5]\n[figures.b]\n" + fig,
      "seeds.toml");
  CHECK(c.find("a")->line_seeds(1, c.seeds) == std::vector<uint64_t>{3, 4, 5});
  CHECK(c.find("b")->line_seeds(1, c.seeds) == std::vector<uint64_t>{1, 2});
  CHECK(plan_runs(c, {"a"}, c.seeds).size() == 6);  // 2 lines × 3 own seeds
  CHECK(plan_runs(c, {}, c.seeds).size() == 10);    // b's 2 × 2 are not a's
  use_only_experiment_seeds(c);
  CHECK(c.find("a")->line_seeds(0, {1}) == std::vector<uint64_t>{1});
  CHECK(plan_runs(c, {}, {1}).size() == 2);  // both figures share nope and alibi at seed 1

  CHECK(error_of("seeds = [1]\n[figures.a]\n" + fig + "seeds = []\n")
            .find("figures.a: 'seeds' must be a non-empty list of integers >= 0") !=
        std::string::npos);
  CHECK(error_of("seeds = [1]\n[figures.a]\n" + fig + "seeds = [1, -2]\n")
            .find("must hold integers >= 0") != std::string::npos);
  CHECK(error_of("seeds = [1]\n[figures.a]\nvary = \"seed\"\nvalues = [1, 2]\nseeds = [3]\n")
            .find("'seeds' in a figure that varies the seed") != std::string::npos);
}

TEST_CASE(
    "an experiment trains each run once, writes figure CSVs and a report, and skips "
    "finished runs when run again") {
  const fs::path out = fresh_dir("basic");
  REQUIRE(run_experiment(tiny_options(out)) == 0);
  for (const char* f : {"config.toml", "selection.json", "figp.csv", "figr.csv", "results.csv",
                        "report.md", "report.html", "figp.dat", "figp.gp"})
    CHECK_MESSAGE(fs::exists(out / f), f);
  int n_runs = 0;
  for (const auto& e : fs::directory_iterator(out / "runs")) {
    const auto rec = load_run(e.path());
    REQUIRE(rec);
    CHECK(rec->status == "completed");
    ++n_runs;
  }
  CHECK(n_runs == 6);
  // figp.csv: 2 lines × 2 seeds × 6 lengths, plus the header.
  const std::string csv = read_text(out / "figp.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * 2 * 6);
  CHECK(csv.rfind("figure,line,run_id,task,pe,reparam,reparam_shift,l_train,l_test,steps,seed,"
                  "length,mse,",
                  0) == 0);
  const auto before = fs::last_write_time(
      out / "runs" / run_id(plan_runs(parse_experiment_config(kTinyConfig, "t"), {}, {1})[0].spec) /
      "results.csv");
  REQUIRE(run_experiment(tiny_options(out)) == 0);  // everything is on disk: nothing retrained
  const auto after = fs::last_write_time(
      out / "runs" / run_id(plan_runs(parse_experiment_config(kTinyConfig, "t"), {}, {1})[0].spec) /
      "results.csv");
  CHECK(before == after);
}

TEST_CASE("an output folder holding results of a different config is refused") {
  const fs::path out = fresh_dir("other-config");
  ExperimentOptions o = tiny_options(out);
  o.figures = {"p"};
  o.n_seeds = 1;
  REQUIRE(run_experiment(o) == 0);
  std::string changed = kTinyConfig;
  changed.replace(changed.find("steps = 150"), 11, "steps = 151");
  o.config_text = changed;
  CHECK_THROWS_WITH_AS(run_experiment(o),
                       doctest::Contains("holds results from a different config"), UsageError);
}

TEST_CASE("lenlab plot redraws an experiment folder, figures are drawn when gnuplot is present") {
  const fs::path out = fresh_dir("plot");
  ExperimentOptions o = tiny_options(out);
  o.figures = {"p"};
  o.n_seeds = 1;
  REQUIRE(run_experiment(o) == 0);
  CHECK_FALSE(fs::exists(out / "figp.png"));  // gnuplot was "missing" for the run
  std::ostringstream log;
  REQUIRE(plot_experiment(out, PlotOptions{"/nonexistent/gnuplot"}, &log) == 0);
  CHECK(log.str().find("apt-get install gnuplot-nox") != std::string::npos);
  CHECK(read_text(out / "figp.csv").find("p,alibi,") != std::string::npos);
  if (!gnuplot_available(PlotOptions{})) {
    MESSAGE("skipping the drawing half: gnuplot is not installed (apt-get install gnuplot-nox)");
    return;
  }
  REQUIRE(plot_experiment(out, PlotOptions{}, nullptr) == 0);
  CHECK(fs::file_size(out / "figp.png") > 1000);
  CHECK(read_text(out / "figp.svg").find("<svg") != std::string::npos);
  CHECK(read_text(out / "report.md").find("![figure p](figp.png)") != std::string::npos);
  CHECK_THROWS_WITH_AS(plot_experiment(out / "runs", PlotOptions{}, nullptr),
                       doctest::Contains("is not an experiment folder"), UsageError);
}

TEST_CASE("--emit-slurm writes a job array with one task per run, and --run-index runs one") {
  const fs::path out = fresh_dir("slurm");
  ExperimentOptions o = tiny_options(out);
  o.emit_slurm = out / "slurm";
  o.lenlab_path = "/opt/lenlab";
  o.device = "cpu";          // what the tasks are told too
  o.cpu_speed = {1e6, 1e6};  // this machine's rates, fixed: 1 MFLOP/s makes these runs hours long
  REQUIRE(run_experiment(o) == 0);
  const std::string script = read_text(out / "slurm" / "lenlab.sbatch");
  CHECK(script.find("#SBATCH --array=0-5\n") != std::string::npos);  // 6 runs
  CHECK(script.find("#SBATCH --cpus-per-task=1\n") != std::string::npos);
  // --time: 3x the longest run's predicted time at those rates (--mem: at least 1G).
  const auto planned_runs = plan_runs(parse_experiment_config(kTinyConfig, "t"), {}, {1, 2});
  double longest = 0;
  for (const PlannedRun& r : planned_runs) {
    const RunCost cost = estimate_run_cost(r.spec, resolve(r.spec).model);
    longest = std::max(longest, predicted_train_seconds(cost, o.cpu_speed) +
                                    predicted_eval_seconds(cost, o.cpu_speed));
  }
  const long limit = static_cast<long>(std::ceil(3 * longest));
  REQUIRE(limit > 600);  // past the 10 minutes every task gets at least
  CHECK(script.find(fmt::format("#SBATCH --time={}-{:02}:{:02}:{:02}\n", limit / 86400,
                                limit % 86400 / 3600, limit % 3600 / 60, limit % 60)) !=
        std::string::npos);
  CHECK(script.find("#SBATCH --mem=1G\n") != std::string::npos);
  CHECK(script.find("--run-index \"$SLURM_ARRAY_TASK_ID\" --device cpu\n") != std::string::npos);
  CHECK(script.find("/opt/lenlab run " + fs::absolute(out).string() + "/config.toml --out " +
                    fs::absolute(out).string() + " --run-index \"$SLURM_ARRAY_TASK_ID\"") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out / "runs" / "x"));
  // What one array task does: train run 4 of the plan, nothing else.
  o.emit_slurm.clear();
  o.run_index = 4;
  REQUIRE(run_experiment(o) == 0);
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out / "runs")) ++n;
  CHECK(n == 1);
  const auto planned = plan_runs(parse_experiment_config(kTinyConfig, "t"), {}, {1, 2});
  CHECK(fs::exists(out / "runs" / planned[4].id / "results.csv"));
  o.run_index = 6;
  CHECK_THROWS_WITH_AS(run_experiment(o), doctest::Contains("--run-index 6 is out of range"),
                       UsageError);
}

TEST_CASE("results.csv round-trips through its writer and reader, and bad cells are named") {
  LengthResult a;
  a.length = 3;
  a.mse = 0.125;
  a.mean_prediction = 2.5;
  a.mean_target = 3;
  a.exact = true;
  a.n_sequences = 8;
  LengthResult b = a;
  b.length = 4;
  b.mse = std::numeric_limits<double>::infinity();
  b.n_nonfinite = 2;
  const auto back = parse_results_csv(results_csv_text({a, b}), "r.csv");
  REQUIRE(back.size() == 2);
  CHECK(back[0].mse == 0.125);
  CHECK(back[0].exact);
  CHECK(back[1].mse == std::numeric_limits<double>::infinity());
  CHECK(back[1].n_nonfinite == 2);
  std::string bad = results_csv_text({a});
  bad.replace(bad.find("0.125"), 5, "0.1x5");
  CHECK_THROWS_WITH_AS(parse_results_csv(bad, "r.csv"), doctest::Contains("r.csv:2: '0.1x5'"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_results_csv("length,mse\n", "r.csv"),
                       doctest::Contains("not a lenlab results file"), UsageError);
}
