// What the misuse table (test_misuse.cpp) cannot hold: the limits of resolve() (the last value
// accepted, the first refused), the benchmarks' arguments, and faults that need a setup of their
// own: a full disk mid-run, a killed writer's temporaries, a figure that varies the seed, a
// folder of cut-short manifests, run folders whose files do not hold what they claim, an error
// message that would quote a huge value, and an experiment folder whose selection.json was changed.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/test_paths.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

TEST_CASE("the limits of resolve(): the last accepted value and the first refused one") {
  const auto ok = [](auto edit) {
    TrainSpec s;
    edit(s);
    return usage_message([&] { resolve(s); }) == "<no UsageError>";
  };
  CHECK(ok([](TrainSpec& s) { s.l_train = 1; }));
  CHECK(!ok([](TrainSpec& s) { s.l_train = 0; }));
  CHECK(ok([](TrainSpec& s) { s.l_test = kMaxLength; }));
  CHECK(!ok([](TrainSpec& s) { s.l_test = kMaxLength + 1; }));
  CHECK(ok([](TrainSpec& s) { s.threads = thread_limit(); }));
  CHECK(!ok([](TrainSpec& s) { s.threads = thread_limit() + 1; }));
  CHECK(ok([](TrainSpec& s) { s.n_head = 64; }));
  CHECK(!ok([](TrainSpec& s) { s.n_head = 65; }));
  CHECK(ok([](TrainSpec& s) { s.d_model = 65536, s.n_head = 1; }));
  CHECK(!ok([](TrainSpec& s) { s.d_model = 65537, s.n_head = 1; }));
  CHECK(ok([](TrainSpec& s) { s.n_layer = 1024; }));
  CHECK(!ok([](TrainSpec& s) { s.n_layer = 1025; }));
  // The mean task's l_test²/2 targets are not all enumerated for the reparam's checks (30000 took
  // over 2 GB before; found by fuzzing).
  CHECK(ok([](TrainSpec& s) { s.task = "mean", s.l_test = 30000, s.reparam = "sqrt"; }));
  // A batch's rows must fit an int: 2^31 / (l + 2) sequences.
  CHECK(ok([](TrainSpec& s) { s.eval_samples = 1000, s.l_test = 1'000'000; }));
  CHECK(!ok([](TrainSpec& s) { s.eval_samples = 3000, s.l_test = 1'000'000; }));
}

TEST_CASE("lenlab_bench and lenlab_cuda_bench take --help and report bad arguments") {
  if (*LENLAB_BENCH_BINARY == '\0') {
    MESSAGE("skipped: this build has no benchmarks (LENLAB_BUILD_BENCH is off)");
    return;
  }
  const fs::path dir = run_dir("bench_args");
  const auto status = [&](const std::string& args, std::string& err) {
    const fs::path err_file = dir / "err.txt";
    const std::string cmd =
        std::string(LENLAB_BENCH_BINARY) + " " + args + " >/dev/null 2>" + err_file.string();
    const int raw = std::system(cmd.c_str());
    err = read_text(err_file);
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  };
  std::string err;
  CHECK(status("--help", err) == 0);
  CHECK(status("--bogus", err) == 2);
  CHECK(contains(err, "lenlab_bench: error:"));
  CHECK(contains(err, "--bogus"));
  CHECK(status("0", err) == 2);
  CHECK(contains(err, "steps"));
  CHECK(status("many", err) == 2);
  CHECK(contains(err, "many"));
}

TEST_CASE("a bad LENLAB_GEMM is one clear error naming the choices, and nothing is written") {
  const fs::path dir = run_dir("bad_gemm"), out = dir / "run", err_file = dir / "err.txt";
  for (const std::string value : {"bogus", "EIGEN"}) {
    const std::string cmd = "LENLAB_GEMM=" + value + " " + std::string(LENLAB_BINARY) +
                            " train --steps 5 --out '" + out.string() + "' >/dev/null 2>" +
                            err_file.string();
    const int raw = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 2);
    const std::string err = read_text(err_file);
    INFO(err);
    CHECK(contains(err, "lenlab: error: unknown LENLAB_GEMM '" + value + "'"));
    CHECK(contains(err, "'auto', 'eigen' or 'openblas'"));
    CHECK(!fs::exists(out));
  }
  // A valid choice trains, and the manifest names the kernel it ran on.
  const std::string cmd =
      "LENLAB_GEMM=eigen " + std::string(LENLAB_BINARY) +
      " train --steps 5 --l-train 3 --l-test 4 --eval-samples 4 --device cpu --out '" +
      out.string() + "' >/dev/null 2>" + err_file.string();
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(contains(read_text(out / "manifest.json"), "\"cpu_matmul\": \"Eigen ("));
}

TEST_CASE("a full disk mid-run: exit 1 naming the file, and the same command resumes the run") {
  // A file size limit stands in for a full disk: writes past it fail with EFBIG, like ENOSPC (the
  // signal it raises is ignored, as a shell's `trap '' XFSZ` does, so the write returns the error).
  const fs::path dir = run_dir("disk_full"), out = dir / "run", err_file = dir / "err.txt";
  std::string args;
  for (const std::string a :
       {"train", "--out", "{out}", "--l-train", "3", "--l-test", "5", "--eval-samples", "4",
        "--d-model", "64", "--n-head", "4", "--d-ff", "256", "--steps", "20", "--device", "cpu"})
    args += " '" + (a == "{out}" ? out.string() : a) + "'";
  // model.safetensors of d_model 64 is ~180 kB: 64 blocks of 1 kB stop it, not the manifest.
  const std::string limited = "sh -c \"trap '' XFSZ; ulimit -f 64; exec " +
                              std::string(LENLAB_BINARY) + args + "\" 2>" + err_file.string() +
                              " >/dev/null";
  const int raw = std::system(limited.c_str());
  REQUIRE(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 1);
  const std::string err = read_text(err_file);
  INFO(err);
  CHECK(contains(err, "lenlab: error: cannot write " + (out / "model.safetensors").string()));
  CHECK(contains(read_text(out / "manifest.json"), "\"status\": \"running\""));
  CHECK(!fs::exists(out / "model.safetensors"));
  for (const auto& e : fs::directory_iterator(out))  // no temporary left behind
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);

  // The same command, without the limit and without --overwrite, trains the run again.
  const std::string again =
      std::string(LENLAB_BINARY) + args + " >/dev/null 2>" + err_file.string();
  CHECK(std::system(again.c_str()) == 0);
  CHECK(contains(read_text(out / "manifest.json"), "\"status\": \"completed\""));
  CHECK(fs::exists(out / "model.safetensors"));
}

TEST_CASE("temporaries of a killed writer are removed when the folder is used again") {
  const fs::path dir = run_dir("stale_tmp");
  // A writer on this machine that no longer exists: a child that has exited.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int ignored = 0;
  ::waitpid(child, &ignored, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string dead = fmt::format(".results.csv.tmp.{}.{}.0", host, child);
  const std::string live = fmt::format(".report.md.tmp.{}.{}.0", host, ::getpid());
  const std::string elsewhere = ".fig1a.csv.tmp.another-host.1.0";
  for (const std::string& name : {dead, live, elsewhere}) std::ofstream(dir / name) << "partial";
  CHECK(remove_stale_temporaries(dir) == 1);
  CHECK(!fs::exists(dir / dead));
  CHECK(fs::exists(dir / live));       // its writer may still rename it
  CHECK(fs::exists(dir / elsewhere));  // a writer on another machine sharing the folder
}

TEST_CASE("a figure that varies the seed gets one run per value, not the sweep's seeds") {
  const ExperimentConfig config = parse_experiment_config(R"(seeds = [7]
[defaults]
l_train = 3
[figures.spread]
vary = "seed"
values = [1, 2, 3]
[figures.pe]
vary = "pe"
values = ["nope", "alibi"]
)",
                                                          "seed.toml");
  const std::vector<PlannedRun> runs = plan_runs(config, {}, config.seeds);
  std::vector<uint64_t> seeds;
  for (const PlannedRun& r : runs) seeds.push_back(r.spec.seed);
  std::sort(seeds.begin(), seeds.end());
  // spread: seeds 1, 2, 3; pe: nope and alibi at the sweep's seed 7.
  CHECK(seeds == std::vector<uint64_t>{1, 2, 3, 7, 7});
  const FigureSpec& spread = *config.find("spread");
  CHECK(spread.line_seeds(1, config.seeds) == std::vector<uint64_t>{2});
  CHECK(spread.line_spec(2, 7).seed == 3);
}

TEST_CASE("theory --runs over a folder of cut-short manifests says so instead of n = 0") {
  const fs::path dir = run_dir("truncated_manifests");
  for (const char* run : {"a", "b"}) {
    fs::create_directories(dir / run);
    std::ofstream(dir / run / "manifest.json") << R"({"status": "compl)";
  }
  const CliResult r = run_cli({"theory", "--runs", dir.string()});
  INFO(r.err);
  CHECK(r.rc == 2);
  CHECK(contains(r.err, "no completed run"));
  CHECK(contains(r.err, "2 unreadable manifest.json file(s)"));
}

TEST_CASE("a run folder that does not hold what it claims is refused by name, nothing written") {
  const fs::path dir = run_dir("lying_run_folder"), good = dir / "good";
  REQUIRE(run_cli(tiny_args(good)).rc == 0);
  const std::string manifest = read_text(good / "manifest.json");
  const auto variant = [&](const std::string& name, const std::string& manifest_text) {
    const fs::path run = dir / name;
    fs::copy(good, run, fs::copy_options::recursive);
    std::ofstream(run / "manifest.json") << manifest_text;
    return run;
  };
  // A NaN in the first weight (safetensors: 8-byte header length, the JSON header, the data).
  const fs::path nan_run = variant("nan_weight", manifest);
  {
    std::fstream f(nan_run / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    uint64_t header = 0;
    f.read(reinterpret_cast<char*>(&header), 8);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    f.seekp(static_cast<std::streamoff>(8 + header));
    f.write(reinterpret_cast<const char*>(&nan), sizeof nan);
  }
  nlohmann::ordered_json m = nlohmann::ordered_json::parse(manifest);
  nlohmann::ordered_json no_config = m, array_config = m;
  no_config.erase("config");
  array_config["config"] = nlohmann::ordered_json::array({1, 2});
  nlohmann::ordered_json wrong_type = m;
  wrong_type["status"] = 3;
  nlohmann::ordered_json word_key = m, huge_key = m;
  word_key["temperature_by_length"] = {{"x", 1.0}};
  huge_key["temperature_search"] = {{"at_bound", {{"99999999999", "low"}}}};
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {nan_run, "holds nan at index 0; a model's weights are finite numbers"},
      {variant("no_config", no_config.dump()), "no 'config' section"},
      {variant("array_config", array_config.dump()), "'config' is array, not a table"},
      {variant("array_manifest", "[1, 2]"),
       "a run's manifest is a JSON object, this one is an array"},
      {variant("wrong_type", wrong_type.dump()), "a field has the wrong type (type must be string"},
      {variant("word_key", word_key.dump()), "has the key 'x', which is no length from 1 to"},
      {variant("huge_key", huge_key.dump()), "has the key '99999999999', which is no length"},
  };
  for (const auto& [run, word] : cases) {
    const fs::path out = dir / (run.filename().string() + "_eval");
    const CliResult r = run_cli({"eval", run.string(), "--out", out.string()});
    INFO(run.filename().string() << ": " << r.err);
    CHECK(r.rc == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(contains(r.err, word));
    CHECK(!fs::exists(out));
  }
}

TEST_CASE("an error message that quotes a huge value is cut to its head and tail") {
  const std::string value(900000, 'x');
  const CliResult r = run_cli({"train", "--steps", value + "\x01"});  // CLI11 quotes it whole
  CHECK(r.rc == 2);
  CHECK(r.err.size() < 2500);
  CHECK(contains(r.err, "lenlab: error: --steps"));
  CHECK(contains(r.err, "bytes left out"));
  CHECK(contains(r.err, "(see lenlab train --help)"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find('\x01') == std::string::npos);
}

TEST_CASE("lenlab plot refuses a changed selection.json by name, nothing drawn") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not JSON", "not valid JSON"},
      {"[\"x\"]", "a JSON object was expected, not array"},
      {"{\"seeds\": [1]}", "key 'figures' not found"},
      {"{\"figures\": [\"x\"], \"seeds\": \"1\"}", "type must be array"},
      {"{\"figures\": " + std::string(1000, '[') + std::string(1000, ']') + "}",
       "nested more than 32 levels deep"},
      // grown_seeds (--seeds-until-decided): a figure the config lacks, a figure without seeds.
      {"{\"figures\": [\"x\"], \"seeds\": [1], \"grown_seeds\": {\"y\": [1, 2]}}",
       "grows the seeds of figure 'y', which the experiment's config.toml does not have"},
      {"{\"figures\": [\"x\"], \"seeds\": [1], \"grown_seeds\": {\"x\": []}}",
       "grown_seeds: figure 'x' has no seeds"},
      {"{\"figures\": [\"nope\"], \"seeds\": [1]}", "unknown figure 'nope'"},
  };
  int i = 0;
  for (const auto& [selection, word] : cases) {
    const fs::path dir = run_dir(fmt::format("selection_{}", i++));
    write_file_atomic(dir / "config.toml",
                      "seeds = [1]\n[figures.x]\nvary = \"pe\"\nvalues = [\"nope\"]\n");
    write_file_atomic(dir / "selection.json", selection);
    const CliResult r = run_cli({"plot", dir.string()});
    INFO(selection << ": " << r.err);
    CHECK(r.rc == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(contains(r.err, word));
    if (i < static_cast<int>(cases.size())) CHECK(contains(r.err, "selection.json"));
    CHECK(!fs::exists(dir / "figx.csv"));
  }
}
