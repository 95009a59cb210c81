// Sweeps: a killed one resumes to the same results, on_tick sees the work and can stop it, runs
// side by side give the bytes they give one by one.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "results/run_record.hpp"
#include "tests/support/experiment_support.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/test_support.hpp"

extern char** environ;

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

TEST_CASE("a killed sweep resumes and gives the same results as an uninterrupted one") {
  const fs::path whole = experiment_dir("whole"), killed = experiment_dir("killed");
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

TEST_CASE("a sweep's on_tick sees the work done, and a throw from it stops every run") {
  const fs::path out = experiment_dir("ticks");
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
  const fs::path one = experiment_dir("one_by_one"), two = experiment_dir("side_by_side");
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

// A run's manifest.json and results.csv are all a report reads: copied without weights or loss
// (docs/data's run records, scripts/docs_snapshot.py), they are finished runs on another machine.
TEST_CASE("a folder of run records alone (no weights, no loss) is resumed without training") {
  const fs::path whole = experiment_dir("records_whole"), records = experiment_dir("records_only");
  REQUIRE(run_experiment(tiny_options(whole)) == 0);
  int copied = 0;
  for (const auto& e : fs::directory_iterator(whole / "runs")) {
    fs::create_directories(records / "runs" / e.path().filename());
    for (const char* f : {"manifest.json", "results.csv"})
      fs::copy_file(e.path() / f, records / "runs" / e.path().filename() / f);
    ++copied;
  }
  REQUIRE(copied == 6);
  REQUIRE(run_experiment(tiny_options(records)) == 0);
  for (const auto& e : fs::directory_iterator(records / "runs")) {
    INFO(e.path().filename().string());
    CHECK_FALSE(fs::exists(e.path() / "model.safetensors"));  // nothing was trained again
    CHECK_FALSE(fs::exists(e.path() / "loss.csv"));
  }
  for (const char* f : {"results.csv", "figp.csv", "figr.csv", "report.md"})
    CHECK_MESSAGE(read_text(whole / f) == read_text(records / f), f);
}
