// Fine-tuning (--init-from, lab/run/init_from.hpp): a run that starts from a completed run's
// weights, names it by id, grows a learned position table with fresh rows; what it refuses before
// writing anything; and sweeps whose lines fine-tune another figure's runs, parents first.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/run/init_from.hpp"
#include "lab/run/run_train.hpp"
#include "models/checkpoint.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/parameters.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A tiny learned-position run of the length task (tested to length 8: a 10-row table).
TrainSpec parent_spec() {
  TrainSpec s = tiny_spec();
  s.task = "length";
  s.pe = "learned";
  return s;
}

void train_into(const TrainSpec& spec, const fs::path& out, const fs::path& save_init = {}) {
  RunOptions o;
  o.out = out;
  o.save_init = save_init;
  REQUIRE(run_train(spec, o) == kExitOk);
}

// The UsageError text of fine-tuning `child` into `out`; "" when accepted.
std::string refusal(const TrainSpec& child, const fs::path& out) {
  RunOptions o;
  o.out = out;
  try {
    run_train(child, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("fine-tuning starts from the parent's weights, names it by id, grows a learned table") {
  const fs::path dir = run_dir("init-from");
  const TrainSpec parent = parent_spec();
  train_into(parent, dir / "parent");

  TrainSpec child = parent;
  child.init_from = (dir / "parent").string();
  child.steps = 7;
  child.optimizer.lr = 3e-4;
  child.l_train = 6;
  child.l_test = 12;  // a 14-row table: 4 rows past the parent's 10
  train_into(child, dir / "child", dir / "child-init.safetensors");

  // Its first weights: the parent's, and past the parent's table the child's fresh rows.
  const ModelConfig theirs = model_config(parent), ours = model_config(child);
  REQUIRE(theirs.max_positions == 10);
  REQUIRE(ours.max_positions == 14);
  const std::vector<double> start = load_checkpoint(dir / "child-init.safetensors", ours);
  const std::vector<double> trained = load_checkpoint(dir / "parent" / "model.safetensors", theirs);
  Model<CpuBackend<float>> fresh(ours);
  fresh.init(child.seed);
  const std::vector<float> fresh_params = fresh.parameters(0);
  const auto from = parameter_layout(theirs), to = parameter_layout(ours);
  REQUIRE(from.size() == to.size());
  for (size_t t = 0; t < to.size(); ++t) {
    INFO(to[t].name);
    REQUIRE(from[t].name == to[t].name);
    const size_t kept = std::min(from[t].size, to[t].size);
    for (size_t i = 0; i < kept; ++i) CHECK(start[to[t].offset + i] == trained[from[t].offset + i]);
    for (size_t i = kept; i < to[t].size; ++i)  // the grown rows
      CHECK(start[to[t].offset + i] == static_cast<double>(fresh_params[to[t].offset + i]));
    if (to[t].name == "wpe") CHECK(to[t].size - kept == 4u * ours.d_model);
  }

  // The manifest names the parent by id (config) and says where it was and what it was.
  const Json m = Json::parse(read_text(dir / "child" / "manifest.json"));
  const std::string parent_id = run_id(parent);
  CHECK(m.at("config").at("init_parent") == parent_id);
  CHECK_FALSE(m.at("config").contains("init_from"));
  CHECK(m.at("init_from").at("run_id") == parent_id);
  CHECK(m.at("init_from").at("path") == fs::absolute(dir / "parent").lexically_normal().string());
  CHECK(m.at("init_from").at("config").at("l_train") == parent.l_train);
  CHECK(m.at("config").at("steps") == 7);  // its own settings
  CHECK(load_run(dir / "child", false)->status == "completed");

  // The run id holds the parent's id, not its path: a copy of the parent elsewhere gives the
  // same id, and a fresh run of the same settings another.
  fs::copy(dir / "parent", dir / "moved", fs::copy_options::recursive);
  TrainSpec moved = child;
  moved.init_from = (dir / "moved").string();
  CHECK(run_id(with_parent_id(moved)) == run_id(with_parent_id(child)));
  TrainSpec scratch = child;
  scratch.init_from.clear();
  CHECK(run_id(with_parent_id(scratch)) != run_id(with_parent_id(child)));
  // A fine-tune of a fine-tune: the chain's ids nest.
  TrainSpec grandchild = child;
  grandchild.init_from = (dir / "child").string();
  grandchild.l_test = 12;
  CHECK(with_parent_id(grandchild).init_parent == run_id(with_parent_id(child)));
  train_into(grandchild, dir / "grandchild");
}

TEST_CASE("fine-tuning refuses, naming the problem, before writing anything") {
  const fs::path dir = run_dir("init-from-refused");
  const TrainSpec parent = parent_spec();
  train_into(parent, dir / "parent");
  const fs::path out = dir / "child";
  auto child_of = [&](const fs::path& p) {
    TrainSpec c = parent;
    c.init_from = p.string();
    return c;
  };
  // A copy of the parent, broken one way.
  auto broken = [&](const std::string& name, const std::function<void(const fs::path&)>& harm) {
    const fs::path p = dir / name;
    fs::copy(dir / "parent", p, fs::copy_options::recursive);
    harm(p);
    return p;
  };
  auto with_status = [&](const std::string& status) {
    return [status](const fs::path& p) {
      Json m = Json::parse(read_text(p / "manifest.json"));
      m["status"] = status;
      write_raw(p / "manifest.json", m.dump());
    };
  };
  struct Row {
    TrainSpec child;
    std::string word;
  };
  std::vector<Row> rows = {
      {child_of(dir / "absent"), "no such folder"},
      {child_of(broken("empty", [](const fs::path& p) { fs::remove(p / "manifest.json"); })),
       "holds no run"},
      {child_of(broken("corrupt",
                       [](const fs::path& p) { write_raw(p / "manifest.json", "{\"status\":"); })),
       "its manifest cannot be read"},
      {child_of(broken("running", with_status("running"))), "'running'"},
      {child_of(broken("diverged", with_status("diverged"))), "'diverged'"},
      {child_of(
           broken("no-weights", [](const fs::path& p) { fs::remove(p / "model.safetensors"); })),
       "no model.safetensors"},
      {child_of(broken("bad-weights",
                       [](const fs::path& p) { write_raw(p / "model.safetensors", "12345678"); })),
       "--init-from"},
  };
  TrainSpec wider = child_of(dir / "parent");
  wider.d_model = 32;
  rows.push_back({wider, "--d-model 16, this one 32"});
  TrainSpec other_pe = child_of(dir / "parent");
  other_pe.pe = "alibi";
  rows.push_back({other_pe, "positional encoding is 'learned'"});
  TrainSpec token = child_of(dir / "parent");
  token.task = "markov";
  rows.push_back({token, "scalar task 'length', this one is the token task 'markov'"});
  TrainSpec zero = child_of(dir / "parent");
  zero.steps = 0;
  rows.push_back({zero, "--steps must be a positive integer"});
  for (const Row& row : rows) {
    INFO(row.child.init_from << ": " << row.word);
    CHECK(refusal(row.child, out).find(row.word) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  // Into its own folder: the weights it starts from would be replaced first.
  RunOptions same;
  same.out = dir / "parent";
  same.overwrite = true;
  CHECK_THROWS_WITH_AS(run_train(child_of(dir / "parent"), same),
                       doctest::Contains("is this run's own --out"), UsageError);
  CHECK(load_run(dir / "parent", false)->status == "completed");
}

TEST_CASE("a sweep line fine-tunes another figure's run: the parent planned and trained first") {
  const std::string config = R"(seeds = [1, 2]
[defaults]
task = "length"
pe = "learned"
l_train = 3
l_test = 6
steps = 20
d_model = 16
n_head = 2
d_ff = 32
n_layer = 1
eval_samples = 8
[figures.pre]
title = "pretrained"
vary = "pe"
values = ["learned", "alibi"]
[figures.tuned]
title = "fine-tuned at l_train 5"
init_from = "figure:pre"
l_train = 5
steps = 10
vary = "pe"
values = ["learned", "alibi"]
)";
  const ExperimentConfig c = parse_experiment_config(config, "ft.toml");
  // Only the fine-tunes selected: their parents are planned anyway, each before its children.
  const std::vector<PlannedRun> runs = plan_runs(c, {"tuned"}, {1, 2});
  REQUIRE(runs.size() == 8);
  std::set<std::string> planned;
  int children = 0;
  for (const PlannedRun& r : runs) {
    if (!r.parent.empty()) {
      ++children;
      CHECK(planned.count(r.parent) == 1);  // its parent came first
      CHECK(r.spec.init_parent == r.parent);
      // The parent has the child's encoding and seed.
      for (const PlannedRun& p : runs)
        if (p.id == r.parent) {
          CHECK(p.spec.pe == r.spec.pe);
          CHECK(p.spec.seed == r.spec.seed);
          CHECK(p.spec.l_train == 3);
        }
    }
    planned.insert(r.id);
  }
  CHECK(children == 4);

  // Trained: every child's manifest names its parent, which is on disk and completed.
  const fs::path out = run_dir("init-from-sweep");
  ExperimentOptions o;
  o.out = out;
  o.config_text = config;
  o.config_source = "ft.toml";
  o.jobs = 2;
  o.plot.gnuplot = "/nonexistent/gnuplot";
  REQUIRE(run_experiment(o) == 0);
  // The figure of the fine-tunes finds them (by the plan's ids, which hold their parents'):
  // 2 lines × 2 seeds × lengths 1..6, plus the header.
  const std::string tuned_csv = read_text(out / "figtuned.csv");
  CHECK(std::count(tuned_csv.begin(), tuned_csv.end(), '\n') == 1 + 2 * 2 * 6);
  for (const PlannedRun& r : runs) {
    const auto rec = load_run(out / "runs" / r.id, false);
    REQUIRE(rec);
    CHECK(rec->status == "completed");
    if (r.parent.empty()) continue;
    const Json m = Json::parse(read_text(out / "runs" / r.id / "manifest.json"));
    CHECK(m.at("init_from").at("run_id") == r.parent);
  }

  // Loops and unknown or unmatched parents are refused when planned.
  auto plan_error = [](const std::string& text) {
    try {
      plan_runs(parse_experiment_config(text, "bad.toml"), {}, {1});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string base = "seeds = [1]\n[defaults]\ntask = \"length\"\n";
  const std::string one_line = "vary = \"steps\"\nvalues = [5]\n";
  CHECK(contains(plan_error(base + "[figures.a]\ninit_from = \"figure:b\"\n" + one_line +
                            "[figures.b]\ninit_from = \"figure:a\"\n" + one_line),
                 "loops: a → b → a"));
  CHECK(contains(plan_error(base + "[figures.a]\ninit_from = \"figure:a\"\n" + one_line),
                 "loops: a → a"));
  CHECK(contains(plan_error(base + "[figures.a]\ninit_from = \"figure:zz\"\n" + one_line),
                 "names no figure"));
  CHECK(contains(plan_error(base + "[figures.a]\nvary = \"pe\"\nvalues = [\"nope\", \"rope\"]\n" +
                            "[figures.b]\ninit_from = \"figure:a\"\npe = \"alibi\"\n" + one_line),
                 "no line of a"));
}

TEST_CASE("a run folder holding another encoding's checkpoint: eval and fine-tuning refuse it") {
  const fs::path dir = run_dir("init-from-swapped");
  TrainSpec rope = tiny_spec(), learned = tiny_spec();
  rope.pe = "rope";
  learned.pe = "learned";
  train_into(rope, dir / "rope");
  train_into(learned, dir / "learned");
  // A rope manifest over a checkpoint holding a learned position table.
  fs::copy_file(dir / "learned" / "model.safetensors", dir / "rope" / "model.safetensors",
                fs::copy_options::overwrite_existing);
  const CliResult e = run_cli({"eval", (dir / "rope").string(), "--out", (dir / "eval").string()});
  INFO("eval: " << e.err);
  CHECK(e.rc == 2);
  CHECK(contains(e.err, "unexpected tensors wpe"));
  CHECK(contains(e.err, "encoding 'rope'"));
  CHECK(contains(e.err, "records encoding 'learned'"));
  CHECK(!fs::exists(dir / "eval"));
  TrainSpec child = rope;
  child.init_from = (dir / "rope").string();
  const std::string msg = refusal(child, dir / "child");
  CHECK(contains(msg, "--init-from " + (dir / "rope").string()));
  CHECK(contains(msg, "unexpected tensors wpe"));
  CHECK(contains(msg, "records encoding 'learned'"));
  CHECK(!fs::exists(dir / "child"));
}

TEST_CASE("--save-init onto the parent's checkpoint is refused, through a link or a ..") {
  const fs::path dir = run_dir("init-from-alias");
  train_into(parent_spec(), dir / "parent");
  const std::string weights = read_text(dir / "parent" / "model.safetensors");
  fs::create_directory_symlink(dir / "parent", dir / "alias");
  fs::create_symlink(dir / "parent" / "model.safetensors", dir / "link.safetensors");
  fs::create_directories(dir / "sub");
  TrainSpec child = parent_spec();
  child.init_from = (dir / "parent").string();
  for (const fs::path& target : {dir / "alias" / "model.safetensors", dir / "link.safetensors",
                                 dir / "sub" / ".." / "alias" / "model.safetensors"}) {
    RunOptions o;
    o.out = dir / "child";
    o.save_init = target;
    const std::string msg = usage_message([&] { run_train(child, o); });
    INFO(target.string() << ": " << msg);
    CHECK(contains(msg, "--save-init " + target.string()));
    CHECK(contains(msg, "model.safetensors of the run it fine-tunes"));
    CHECK(!fs::exists(dir / "child"));
  }
  CHECK(read_text(dir / "parent" / "model.safetensors") == weights);
  CHECK(fs::is_symlink(dir / "link.safetensors"));
  // An evaluation's own file that is a FIFO: refused, the pipe left as it was.
  fs::create_directories(dir / "eval");
  REQUIRE(::mkfifo((dir / "eval" / "results.csv").c_str(), 0666) == 0);
  const CliResult e =
      run_cli({"eval", (dir / "parent").string(), "--out", (dir / "eval").string()});
  CHECK(e.rc == 2);
  CHECK(contains(e.err, "cannot write --out's " + (dir / "eval" / "results.csv").string()));
  CHECK(contains(e.err, "a named pipe (FIFO)"));
  CHECK(fs::is_fifo(dir / "eval" / "results.csv"));
  CHECK(!fs::exists(dir / "eval" / "eval.json"));
}
