// How a run's cost grows with its settings, measured on one core: the time of a training step and
// of an evaluation while one of l_train, l_test, d_model (d_ff = 4·d_model) and n_layer moves
// away from the defaults, against what lenlab's time model (cost/time_model.hpp) predicts from the
// rates it measures in a fraction of a second for each model shape (as --dry-run does). Prints a
// table; with --out also writes scaling.csv and a gnuplot script scaling.gp, drawn to scaling.png /
// scaling.svg when gnuplot is there. Prints figures; never passes or fails on time.
#include <fmt/format.h>
#include <omp.h>
#include <Eigen/Core>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_args.hpp"
#include "core/atomic_file.hpp"
#include "cost/dry_run.hpp"
#include "cost/run_cost.hpp"
#include "cost/time_model.hpp"
#include "models/cpu/backend.hpp"
#include "plots/run_program.hpp"
#include "train/evaluate.hpp"
#include "train/lengths.hpp"
#include "train/run_settings.hpp"
#include "train/trainer.hpp"

using namespace lenlab;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Point {
  std::string setting;  // the one that differs from the defaults
  int value = 0;
  TrainSpec spec;
};

// The grid: each setting swept alone, the others at lenlab train's defaults.
std::vector<Point> grid() {
  std::vector<Point> points;
  const auto add = [&](const std::string& setting, int value, auto edit) {
    Point p{setting, value, TrainSpec{}};
    edit(p.spec, value);
    points.push_back(p);
  };
  for (int v : {5, 10, 20, 40}) add("l_train", v, [](TrainSpec& s, int x) { s.l_train = x; });
  for (int v : {25, 50, 100, 200}) add("l_test", v, [](TrainSpec& s, int x) { s.l_test = x; });
  for (int v : {32, 64, 128})
    add("d_model", v, [](TrainSpec& s, int x) { s.d_model = x, s.d_ff = 4 * x; });
  for (int v : {1, 2, 4}) add("n_layer", v, [](TrainSpec& s, int x) { s.n_layer = x; });
  return points;
}

struct Measured {
  double step_ms = 0, eval_s = 0;              // measured
  double step_ms_model = 0, eval_s_model = 0;  // predicted
};

Measured measure(const Point& p, int steps, int eval_samples, const CpuSpeed& speed) {
  TrainSpec spec = p.spec;
  spec.steps = steps;
  spec.optimizer.warmup_steps = 0;
  spec.eval_samples = eval_samples;
  const ResolvedSpec resolved = resolve(spec);
  Transformer<float> model(resolved.model);
  model.init(spec.seed);
  Measured m;
  m.step_ms = 1e3 * train(model, {{&spec, &resolved, {}}})[0].seconds / steps;
  const auto t = Clock::now();
  evaluate(model, {eval_job(resolved, spec)});
  m.eval_s = seconds_since(t);
  const RunCost cost = estimate_run_cost(spec, resolved.model);
  m.step_ms_model = 1e3 * predicted_train_seconds(cost, speed) / steps;
  m.eval_s_model = predicted_eval_seconds(cost, speed);
  return m;
}

// Four panels, one per setting: measured points and the model's line, step time and evaluation
// time on log axes.
std::string gnuplot_script() {
  std::string s =
      "set terminal pngcairo size 1200,900 font ',10' noenhanced\n"
      "set output 'scaling.png'\n"
      "set datafile separator ','\n"
      "set multiplot layout 2,2 title 'lenlab: cost against settings (one core; points measured, "
      "lines predicted)'\n"
      "set logscale xy\n"
      "set grid\n"
      "set key top left\n";
  for (const char* setting : {"l_train", "l_test", "d_model", "n_layer"}) {
    s += fmt::format(
        "set xlabel '{0}'\nset ylabel 'seconds'\n"
        "plot 'scaling.csv' using (strcol(1) eq '{0}' ? $2 : 1/0):($3/1000) with points pt 7 lc 1 "
        "title 'training step', '' using (strcol(1) eq '{0}' ? $2 : 1/0):($4/1000) with lines lc 1 "
        "dt 2 notitle, '' using (strcol(1) eq '{0}' ? $2 : 1/0):5 with points pt 5 lc 2 title "
        "'evaluation', '' using (strcol(1) eq '{0}' ? $2 : 1/0):6 with lines lc 2 dt 2 notitle\n",
        setting);
  }
  s += "unset multiplot\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 100, eval_samples = 100;
  std::string out;
  CLI::App app{
      "Cost of a training step and of an evaluation against l_train, l_test, d_model and "
      "n_layer on one core, measured and as lenlab's time model predicts it. Prints figures; "
      "never fails on time.",
      "lenlab_scaling_bench"};
  add_steps_argument(app, steps, "Training steps timed per point");
  app.add_option("--eval-samples", eval_samples, "Test sequences per length")
      ->check(int_range(1, 100000))
      ->capture_default_str();
  app.add_option("--out", out, "Folder for scaling.csv, scaling.gp and the figure");
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);

  fmt::print(
      "lenlab scaling benchmark (1 thread; {} training steps and {} test sequences per length "
      "per point; predicted from the time model's rates, measured first for each model shape as "
      "--dry-run does)\n",
      steps, eval_samples);
  std::vector<TrainSpec> runs;
  for (const Point& p : grid()) runs.push_back(p.spec);
  const std::map<SpeedShape, CpuSpeed> speeds = cpu_speeds(runs);  // as --dry-run measures them
  for (const auto& [shape, s] : speeds)
    fmt::print(
        "  rates for {}: training {:.1f} GFLOP/s (a FLOP of attention costing {:.1f}), evaluation "
        "{:.1f} GFLOP/s\n",
        describe(shape), s.train_flops * 1e-9, s.attention_weight, s.eval_flops * 1e-9);
  fmt::print("  {:<8} {:>6} {:>14} {:>14} {:>10} {:>12} {:>12} {:>10}\n", "setting", "value",
             "step ms", "predicted", "ratio", "eval s", "predicted", "ratio");
  std::string csv = "setting,value,step_ms,step_ms_predicted,eval_s,eval_s_predicted\n";
  for (const Point& p : grid()) {
    const Measured m = measure(p, steps, eval_samples, speeds.at(speed_shape(p.spec)));
    fmt::print("  {:<8} {:>6} {:>14.3f} {:>14.3f} {:>10.2f} {:>12.3f} {:>12.3f} {:>10.2f}\n",
               p.setting, p.value, m.step_ms, m.step_ms_model, m.step_ms / m.step_ms_model,
               m.eval_s, m.eval_s_model, m.eval_s / m.eval_s_model);
    std::fflush(stdout);
    csv += fmt::format("{},{},{:.6g},{:.6g},{:.6g},{:.6g}\n", p.setting, p.value, m.step_ms,
                       m.step_ms_model, m.eval_s, m.eval_s_model);
  }
  fmt::print("  (ratio: measured / predicted)\n");
  if (out.empty()) return 0;
  const std::filesystem::path dir(out);
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "scaling.csv", csv);
  write_file_atomic(dir / "scaling.gp", gnuplot_script());
  const auto gnuplot = find_program("gnuplot");
  if (!gnuplot) {
    fmt::print("wrote {}/scaling.csv and scaling.gp (no gnuplot here to draw them)\n", out);
    return 0;
  }
  const int rc = run_program_in(*gnuplot, dir, {"scaling.gp"}).first;
  fmt::print("wrote {}/scaling.csv, scaling.gp{}\n", out,
             rc == 0 ? " and scaling.png" : fmt::format(" (gnuplot failed: status {})", rc));
  return 0;
}
