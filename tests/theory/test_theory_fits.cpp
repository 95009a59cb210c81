// Tests for the theory's power-law fits, measured runs and `lenlab theory`: fits recover known
// exponents, runs are found and averaged, bad input is a clear error, the command's output.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "lab/cli/theory_command.hpp"
#include "reparam/reparam.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tasks/task.hpp"
#include "tests/support/test_support.hpp"
#include "tests/theory/theory_brute_force.hpp"
#include "theory/exact_optimum.hpp"
#include "theory/gradient_descent.hpp"
#include "theory/linear_attention.hpp"
#include "theory/measured_runs.hpp"
#include "theory/paper_closed_form.hpp"
#include "theory/power_law.hpp"
#include "theory/sequence_classes.hpp"
#include "theory/theory_report.hpp"
#include "theory/training_objective.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  return lenlab::test::fresh_dir("theory_fits", name);
}

}  // namespace

TEST_CASE("theory: power-law fits recover known exponents") {
  for (const double p : {0.5, 1.0, 2.0, 3.0}) {
    for (const double a : {5.5, 0.0, -3.0}) {
      CAPTURE(p);
      CAPTURE(a);
      std::vector<double> l, err;
      for (int i = 11; i <= 50; ++i) l.push_back(i), err.push_back(0.7 * std::pow(i - a, p));
      const PowerLawFit known = fit_power_law(l, err, a);
      REQUIRE(known.ok());
      CHECK(std::abs(known.p - p) < 0.05);
      CHECK(std::abs(known.p - p) < 1e-9);
      CHECK(near(known.c, 0.7, 1e-9));
      CHECK(known.n_points == 40);
      CHECK_FALSE(known.a_fitted);
      const PowerLawFit fitted = fit_power_law(l, err);
      REQUIRE(fitted.ok());
      CHECK(fitted.a_fitted);
      CHECK(std::abs(fitted.p - p) < 0.05);
      CHECK(std::abs(fitted.a - a) < 0.5);
      CHECK(near(fitted(30), 0.7 * std::pow(30 - a, p), 1e-3));
    }
  }
  // A flat curve has p = 0.
  const std::vector<double> l = {11, 12, 13, 14, 15}, flat = {2, 2, 2, 2, 2};
  CHECK(std::abs(fit_power_law(l, flat).p) < 1e-9);
  CHECK(std::abs(fit_power_law(l, flat, 0.0).p) < 1e-9);
  // Zeros and non-finite errors are skipped; too few points give !ok().
  const std::vector<double> holes = {1, 0, INFINITY, 4, NAN};
  CHECK(fit_power_law(l, holes, 10.0).n_points == 2);
  CHECK_FALSE(fit_power_law(l, holes).ok());
  CHECK_FALSE(fit_power_law({1}, {1}, 0.0).ok());
  CHECK_THROWS_AS(fit_power_law({1, 2}, {1}), std::invalid_argument);
}

namespace {

void write_text(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

// A fake run: manifest with the given config and status, results.csv with mse = scale · l.
void fake_run(const fs::path& dir, const std::string& task, int l_train, const std::string& reparam,
              const std::string& pe, const std::string& status, double scale, int l_test = 12) {
  TrainSpec spec;
  spec.task = task;
  spec.pe = pe;
  spec.reparam = reparam;
  spec.l_train = l_train;
  spec.l_test = l_test;
  nlohmann::json m;
  m["status"] = status;
  m["config"] = to_json(spec);
  write_text(dir / "manifest.json", m.dump(2));
  std::vector<LengthResult> rows;
  for (int l = 1; l <= l_test; ++l) {
    LengthResult r;
    r.length = l;
    r.mse = scale * l;
    rows.push_back(r);
  }
  write_text(dir / "results.csv", results_csv_text(rows));
}

struct TheoryResult {
  std::string out;
  std::string usage_error;  // empty when run() succeeded
};

TheoryResult run_theory(std::vector<std::string> args) {
  CLI::App app{"test"};
  TheoryCommand theory(app);
  args.insert(args.begin(), {"lenlab", "theory"});
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  REQUIRE(theory.parsed());
  std::ostringstream out, err;
  TheoryResult r;
  r.usage_error = usage_message([&] { theory.run({out, err, false, "lenlab theory", "lenlab"}); });
  if (r.usage_error == "<no UsageError>") r.usage_error.clear();
  r.out = out.str();
  return r;
}

}  // namespace

TEST_CASE("theory: measured runs are found recursively, filtered and averaged") {
  const fs::path dir = fresh_dir("runs");
  fake_run(dir / "a" / "seed1", "length", 10, "identity", "nope", "completed", 1.0);
  fake_run(dir / "a" / "seed2", "length", 10, "identity", "nope", "completed", 3.0, 20);
  fake_run(dir / "b" / "deep" / "seed1", "length", 10, "identity", "alibi", "completed", 5.0);
  fake_run(dir / "running", "length", 10, "identity", "nope", "running", 100.0);
  fake_run(dir / "other_task", "sum", 10, "identity", "nope", "completed", 100.0);
  fake_run(dir / "other_l", "length", 8, "identity", "nope", "completed", 100.0);
  fake_run(dir / "other_f", "length", 10, "invsqrt", "nope", "completed", 100.0);
  write_text(dir / "junk" / "manifest.json", "not json");

  const MeasuredErrors any = average_runs(dir, {"length", 10, "identity", 0.0, ""});
  CHECK(any.runs.size() == 3);
  CHECK(any.pe_values == std::vector<std::string>{"alibi", "nope"});
  CHECK(any.n_unreadable == 1);
  REQUIRE(any.lengths.size() == 20);
  CHECK(any.n_runs[0] == 3);
  CHECK(near(any.mean_mse[0], 3.0, 1e-12));  // (1 + 3 + 5) / 3 at l = 1
  CHECK(any.n_runs[19] == 1);                // only seed2 reaches l = 20
  CHECK(near(any.mean_mse[19], 60.0, 1e-12));

  const MeasuredErrors nope = average_runs(dir, {"length", 10, "identity", 0.0, "nope"});
  CHECK(nope.runs.size() == 2);
  CHECK(near(nope.mean_mse[1], 4.0, 1e-12));  // (2 + 6) / 2 at l = 2

  // The run folder itself may be given.
  CHECK(average_runs(dir / "a" / "seed1", {"length", 10, "identity", 0.0, ""}).runs.size() == 1);

  std::string broken = results_csv_text({});
  broken += "1,oops,0,0,0,1,1,0,0\n";
  write_text(dir / "a" / "seed1" / "results.csv", broken);
  const std::string msg = usage_message([&] {
    average_runs(dir, {"length", 10, "identity", 0.0, ""});
  });
  CHECK(contains(msg, "results.csv"));
  CHECK(contains(msg, "oops"));
  CHECK(contains(usage_message([&] { average_runs(dir / "nowhere", {}); }), "nowhere"));
}

TEST_CASE("theory: bad input is a UsageError naming the value and the valid choices") {
  TheoryOptions o;
  o.task = "lenght";
  std::string msg = usage_message([&] { compute_theory(o); });
  CHECK(contains(msg, "'lenght'"));
  CHECK(contains(msg, "'mean', 'length', 'sum' or 'mean-uniform'"));

  o = TheoryOptions{};
  o.tokens = "bos+eos";
  msg = usage_message([&] { compute_theory(o); });
  CHECK(contains(msg, "'bos+eos'"));
  CHECK(contains(msg, "'none', 'bos', 'eos' or 'bos,eos'"));

  o = TheoryOptions{};
  o.l_train = 20, o.l_test = 12;
  msg = usage_message([&] { compute_theory(o); });
  CHECK(contains(msg, "--l-test (12)"));
  CHECK(contains(msg, "--l-train (20)"));

  o = TheoryOptions{};
  o.l_train = 0;
  CHECK(contains(usage_message([&] { compute_theory(o); }), "got 0"));

  o = TheoryOptions{};
  o.task = "sum", o.reparam = "log";  // log(0) at the all-zeros sequence
  CHECK(contains(usage_message([&] { compute_theory(o); }), "--reparam-shift"));

  o = TheoryOptions{};
  o.reparam = "sqrtt";
  CHECK(contains(usage_message([&] { compute_theory(o); }), "sqrtt"));

  // Through the subcommand: the same message, and no --out file written.
  const fs::path dir = fresh_dir("bad");
  const TheoryResult r = run_theory({"--task", "lenght", "--out", (dir / "t.csv").string()});
  CHECK(contains(r.usage_error, "'lenght'"));
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(dir / "t.csv"));
}

TEST_CASE("theory: the subcommand prints the table and summary and writes the CSV") {
  const fs::path dir = fresh_dir("cli");
  fake_run(dir / "runs" / "s1", "length", 10, "identity", "nope", "completed", 2.0, 50);
  fake_run(dir / "runs" / "s2", "length", 10, "identity", "nope", "completed", 4.0, 50);
  const TheoryResult r =
      run_theory({"--task", "length", "--l-train", "10", "--l-test", "50", "--runs",
                  (dir / "runs").string(), "--out", (dir / "theory.csv").string()});
  REQUIRE(r.usage_error.empty());
  CHECK(contains(r.out, "Γ* = (L+1)/2 = 5.5"));
  CHECK(contains(r.out, "runs (2 completed, pe nope)"));
  CHECK(contains(r.out, "p = 2.000, a = 5.5"));  // the Γ form's error is exactly (l - 5.5)^2
  std::ifstream in(dir / "theory.csv");
  std::string line;
  std::getline(in, line);
  CHECK(line ==
        "length,in_train,mean_target,paper_prediction,paper_mse,optimum_prediction,optimum_mse,"
        "scalar_prediction,scalar_mse,runs_mse,runs_n");
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 50);
  CHECK(lines[0].rfind("1,1,1,5.5,20.25,", 0) == 0);
  CHECK(lines[49].rfind("50,0,50,5.5,1980.25,", 0) == 0);
  CHECK(lines[49].substr(lines[49].size() - 6) == ",150,2");  // (2 + 4)/2 · 50 from 2 runs

  // --tokens takes the comma-separated layout as one value.
  const TheoryResult eos = run_theory({"--task", "mean", "--tokens", "bos,eos", "--l-test", "12"});
  REQUIRE(eos.usage_error.empty());
  CHECK(contains(eos.out, "tokens bos,eos"));
  CHECK(contains(eos.out, "the paper's ansatz is for --tokens none"));

  // Without runs and with special tokens: no Γ form, empty cells.
  TheoryOptions o;
  o.task = "sum", o.tokens = "bos,eos";
  const TheoryReport rep = compute_theory(o);
  CHECK_FALSE(rep.paper.has_value());
  CHECK(contains(theory_csv(rep), "\n1,1,0.5,,,"));
}
