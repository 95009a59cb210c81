// Experiment configs, run planning, sweeps that resume, experiment folders.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "cost/budget.hpp"
#include "cost/dry_run.hpp"
#include "cost/run_cost.hpp"
#include "cost/time_model.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/run/run_group.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "test_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

extern char** environ;

namespace {

using lenlab::test::read_text;
fs::path fresh_dir(const std::string& name) {
  return lenlab::test::fresh_dir("experiment", name);
}

// Two tiny figures that share one line (length / nope / identity): 3 distinct runs per seed.
const char* kTinyConfig = R"(
seeds = [1, 2]
[defaults]
task = "length"
l_train = 3
l_test = 6
steps = 150
warmup_steps = 5
d_model = 16
n_head = 2
d_ff = 32
n_layer = 1
eval_samples = 16
[figures.p]
title = "length × pe"
vary = "pe"
values = ["nope", "alibi"]
[figures.r]
title = "length × reparam"
vary = "reparam"
values = ["identity", "sqrt"]
)";

ExperimentOptions tiny_options(const fs::path& out) {
  ExperimentOptions o;
  o.out = out;
  o.config_text = kTinyConfig;
  o.config_source = "tiny.toml";
  o.jobs = 2;
  // CPU workers, whatever the machine has: these tests count workers and read the CPU's
  // prediction (a GPU trains the six runs as one group; tests/cuda checks groups).
  o.device = "cpu";
  o.plot.gnuplot = "/nonexistent/gnuplot";  // figures' data only: rendering is tested elsewhere
  return o;
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
  CHECK(error_of(head + "lr = \"fast\"\n").find("'lr' must be a number") != std::string::npos);
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

TEST_CASE("a killed sweep resumes and gives the same results as an uninterrupted one") {
  const fs::path whole = fresh_dir("whole"), killed = fresh_dir("killed");
  fs::create_directories(killed);
  const fs::path config = killed.parent_path() / "tiny.toml";
  std::ofstream(config) << kTinyConfig;
  auto args = [&](const fs::path& out) {
    // On the CPU: one worker finishes one run at a time, so the kill lands between runs (a GPU
    // trains all six as one group).
    return std::vector<std::string>{
        LENLAB_BINARY, "run",      config.string(), "--out",     out.string(),          "--jobs",
        "1",           "--device", "cpu",           "--gnuplot", "/nonexistent/gnuplot"};
  };
  auto spawn = [](const std::vector<std::string>& a) {
    std::vector<char*> argv;
    for (const auto& s : a) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  };
  auto wait_ok = [](pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  REQUIRE(wait_ok(spawn(args(whole))));

  // Kill the second sweep as soon as its first run has finished, mid-way through the next one.
  const pid_t pid = spawn(args(killed));
  auto completed = [&] {
    int n = 0;
    if (fs::exists(killed / "runs"))
      for (const auto& e : fs::directory_iterator(killed / "runs"))
        if (auto r = load_run(e.path()); r && r->status == "completed") ++n;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (completed() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const int done_before_kill = completed();
  CHECK(done_before_kill >= 1);
  CHECK(done_before_kill < 6);  // it really was interrupted
  CHECK_FALSE(fs::exists(killed / "results.csv"));

  REQUIRE(wait_ok(spawn(args(killed))));
  for (const char* f : {"results.csv", "figp.csv", "figr.csv"})
    CHECK_MESSAGE(read_text(whole / f) == read_text(killed / f), f);
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
  REQUIRE(run_experiment(o) == 0);
  const std::string script = read_text(out / "slurm" / "lenlab.sbatch");
  CHECK(script.find("#SBATCH --array=0-5\n") != std::string::npos);  // 6 runs
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

TEST_CASE(
    "--dry-run prints the plan and its predicted time, leaves out finished runs, writes nothing") {
  const fs::path out = fresh_dir("dry-run") / "exp";  // does not exist yet
  ExperimentOptions o = tiny_options(out);
  o.dry_run = true;
  o.cpu_speed = {50e9, 40e9};  // fixed rates instead of a measurement: the same text every time
  std::ostringstream printed;
  o.print = &printed;
  REQUIRE(run_experiment(o) == 0);
  CHECK_FALSE(fs::exists(out));
  CHECK(printed.str().find("lenlab trains at 50.0 GFLOP/s (a FLOP of attention costing 1.0) and "
                           "evaluates at 40.0 GFLOP/s") != std::string::npos);
  const std::string report = printed.str();
  CHECK(report.find("dry run of tiny.toml: 6 runs, 6 to train, 0 already finished") !=
        std::string::npos);
  // Both kinds of run (l_train 3; the two PEs and two reparams cost the same), 6 in all.
  CHECK(report.find("      6 ") != std::string::npos);
  CHECK(report.find("predicted: ") != std::string::npos);
  CHECK(report.find("on 2 CPU workers (--jobs 2)") != std::string::npos);

  // Two runs finished in --out: only the other four are predicted.
  o.dry_run = false;
  o.figures = {"p"};
  o.n_seeds = 1;
  REQUIRE(run_experiment(o) == 0);
  o.dry_run = true;
  o.figures.clear();
  o.n_seeds = 0;
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("6 runs, 4 to train, 2 already finished in --out") != std::string::npos);

  // Without --out: every run.
  o.out.clear();
  printed.str("");
  REQUIRE(run_experiment(o) == 0);
  CHECK(printed.str().find("6 runs, 6 to train") != std::string::npos);
  o.emit_slurm = out / "slurm";
  CHECK_THROWS_WITH_AS(run_experiment(o), doctest::Contains("--emit-slurm"), UsageError);
}

TEST_CASE("every config shipped in configs/ plans, resolves and dry-runs") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(LENLAB_CONFIGS_DIR)) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    ExperimentOptions o;
    o.config_text = read_text(e.path());
    o.config_source = e.path().filename().string();
    o.jobs = 2;
    o.device = "cpu";  // the calibrated prediction, whatever the machine has
    o.dry_run = true;
    o.cpu_speed = {50e9, 40e9};
    std::ostringstream printed;
    o.print = &printed;
    CHECK(run_experiment(o) == 0);
    CHECK(printed.str().find("predicted: ") != std::string::npos);
    ++n;
  }
  CHECK(n >= 4);  // paper, smoke, tokens, methods
}

TEST_CASE("the GPU's time counts its steps, not only its FLOPs") {
  // 100 000 steps of a tiny model: a few TFLOP, well under a second at the GPU's FLOP rate, but
  // about 1 ms a step, as measured on an H100 (946 steps/s).
  TrainSpec tiny;
  tiny.l_train = 3, tiny.l_test = 5, tiny.d_model = 8, tiny.n_head = 2, tiny.d_ff = 8;
  tiny.eval_samples = 4, tiny.steps = 100000;
  const ModelConfig model = resolve(tiny).model;
  CHECK(estimate_run_cost(tiny, model).flops() / kGpuFlopsPerSecond < 1);
  CHECK_THROWS_WITH_AS(check_run_budget(tiny, model, Budget{"", "1s"}, /*gpu=*/true),
                       doctest::Contains("more than --max-time 1s"), UsageError);
  CHECK(check_run_budget(tiny, model, Budget{"", "10m"}, true).seconds >= 100);
  CHECK(check_sweep_budget({tiny, tiny}, 2, Budget{"", "10m"}, true).seconds >= 100);
  DryRunInput in;
  in.config_source = "tiny.toml";
  in.todo = {tiny};
  in.n_planned = 1;
  in.gpu = true;
  CHECK(dry_run_report(in).find("roughly 1m4") != std::string::npos);
}

TEST_CASE("--dry-run: each model shape is predicted from its own measured rates") {
  DryRunInput in;
  in.config_source = "widths.toml";
  TrainSpec narrow, wide;
  narrow.d_model = 32;
  narrow.d_ff = 128;
  in.todo = {narrow, wide};
  in.n_planned = 2;
  // The same work per FLOP, but the narrow shape runs at a tenth of the wide one's rate.
  in.speeds[speed_shape(narrow)] = {5e9, 4e9};
  in.speeds[speed_shape(wide)] = {50e9, 40e9};
  const std::string report = dry_run_report(in);
  INFO(report);
  CHECK(report.find("measured just now for each model shape:") != std::string::npos);
  CHECK(report.find("d 32/128 layers 2 heads 4 batch 64: trains at 5.0 GFLOP/s (a FLOP of "
                    "attention costing 1.0) and evaluates at 4.0 GFLOP/s") != std::string::npos);
  CHECK(report.find("d 64/256 layers 2 heads 4 batch 64: trains at 50.0 GFLOP/s") !=
        std::string::npos);
  // Each kind's line carries its own shape's prediction.
  const auto predicted_train_s = [&](const TrainSpec& s, const CpuSpeed& speed) {
    return predicted_train_seconds(estimate_run_cost(s, resolve(s).model), speed);
  };
  CHECK(report.find(fmt::format("{:>8.1f}s", predicted_train_s(narrow, {5e9, 4e9}))) !=
        std::string::npos);
  CHECK(report.find(fmt::format("{:>8.1f}s", predicted_train_s(wide, {50e9, 40e9}))) !=
        std::string::npos);
  CHECK(predicted_train_s(narrow, {5e9, 4e9}) > 2 * predicted_train_s(wide, {50e9, 40e9}));
}

TEST_CASE("a sweep's predicted times: shared training counted once, runs on the free worker") {
  TrainSpec base;
  base.steps = 100;
  TrainSpec a = base, b = base, c = base;
  b.test_attention.temperature = "2";  // differs only in test-time attention: shares a's training
  c.task = "sum";
  const std::map<SpeedShape, CpuSpeed> speeds = cpu_speeds({a, b, c}, {50e9, 40e9, 3});
  REQUIRE(speeds.size() == 1);
  CHECK(speeds.begin()->second.attention_weight == 3);  // the fixed rates, nothing measured
  const SweepTimes one = predict_sweep({a, b, c}, speeds, 1, 2);
  REQUIRE(one.train_s.size() == 3);
  const CpuSpeed& speed = speeds.begin()->second;
  const RunCost cost = estimate_run_cost(a, resolve(a).model);
  CHECK(one.train_s[0] == doctest::Approx(predicted_train_seconds(cost, speed)));
  CHECK(one.eval_s[0] == doctest::Approx(predicted_eval_seconds(cost, speed)));
  CHECK(one.train_s[1] == 0);
  CHECK(one.training_shared == std::vector<bool>{false, true, false});
  const double total =
      one.train_s[0] + one.eval_s[0] + one.eval_s[1] + one.train_s[2] + one.eval_s[2];
  CHECK(one.wall == doctest::Approx(total));  // one worker does it all
  // Two workers: a and b are one work item, c the other.
  const SweepTimes two = predict_sweep({a, b, c}, speeds, 2, 2);
  CHECK(two.wall == doctest::Approx(std::max(one.train_s[0] + one.eval_s[0] + one.eval_s[1],
                                             one.train_s[2] + one.eval_s[2])));
  // Four workers on two cores share them: each item takes twice as long.
  CHECK(predict_sweep({a, b, c}, speeds, 4, 2).wall == doctest::Approx(2 * two.wall));

  // The line before long work: the rough estimate's memory and work, the measured rates' time.
  WorkEstimate rough;
  rough.seconds = 1e4;
  rough.flops = 1e15;
  rough.where = "2 CPU workers";
  const WorkEstimate shown = with_measured_time(rough, {a, b, c}, 2, 2, {50e9, 40e9, 3});
  CHECK(shown.seconds == doctest::Approx(two.wall));
  CHECK(shown.flops == rough.flops);
  CHECK(shown.summary().find("on 2 CPU workers (at lenlab's rates on this core, measured just "
                             "now)") != std::string::npos);
}

TEST_CASE("the sweep's wall time: runs handed to the worker that is free first") {
  CHECK(list_schedule_seconds({}, 2) == 0);
  CHECK(list_schedule_seconds({3, 1, 1, 1}, 2) == 3);  // one worker takes 3, the other 1 + 1 + 1
  CHECK(list_schedule_seconds({1, 1, 3}, 2) == 4);     // the long run starts last
  CHECK(list_schedule_seconds({2, 2, 2}, 1) == 6);
  CHECK(list_schedule_seconds({2, 2, 2}, 8) == 2);
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

TEST_CASE("a sweep's on_tick sees the work done, and a throw from it stops every run") {
  const fs::path out = fresh_dir("ticks");
  ExperimentOptions o = tiny_options(out);
  o.config_text = std::string(kTinyConfig)
                      .replace(std::string(kTinyConfig).find("steps = 150"), 11, "steps = 1000000");
  std::vector<double> fractions;
  o.on_tick = [&](double fraction) {
    fractions.push_back(fraction);
    if (fractions.size() == 3) throw std::runtime_error("stop here");
  };
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_experiment(o), "stop here");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  REQUIRE(fractions.size() == 3);
  CHECK(fractions[0] >= 0);
  CHECK(fractions[2] >= fractions[0]);
  CHECK(fractions[2] < 1);
  int running = 0;
  for (const auto& e : fs::directory_iterator(out / "runs")) {
    const auto rec = load_run(e.path(), false);
    REQUIRE(rec);
    running += rec->status == "running";
  }
  CHECK(running == 2);  // the two workers' runs, stopped mid-training
}

// Runs share nothing that changes their numbers: side by side (--jobs 2) they give the bytes they
// give one by one. (The last-bit differences once seen between two --jobs 2 processes came from
// heap addresses, which this in-process pair does not move: tests/
// test_attention_infer_determinism.cpp checks that cause.)
TEST_CASE("runs trained side by side give the very bytes of the same runs one by one") {
  std::string config = kTinyConfig;
  config.replace(config.find("l_test = 6"), 10, "l_test = 24");
  const fs::path one = fresh_dir("one_by_one"), two = fresh_dir("side_by_side");
  for (const auto& [out, jobs] : {std::pair{one, 1}, std::pair{two, 2}}) {
    ExperimentOptions o = tiny_options(out);
    o.config_text = config;
    o.jobs = jobs;
    REQUIRE(run_experiment(o) == 0);
  }
  int compared = 0;
  for (const auto& e : fs::directory_iterator(one / "runs")) {
    INFO(e.path().filename().string());
    for (const char* f : {"results.csv", "loss.csv", "model.safetensors"})
      CHECK(read_text(e.path() / f) == read_text(two / "runs" / e.path().filename() / f));
    ++compared;
  }
  CHECK(compared == 6);
}
