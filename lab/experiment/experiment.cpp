#include "lab/experiment/experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "cost/admission.hpp"
#include "cost/dry_run.hpp"
#include "cost/run_cost.hpp"
#include "lab/experiment/experiment_folder.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/experiment/seeds_until_decided.hpp"
#include "lab/experiment/selection.hpp"
#include "lab/experiment/slurm_script.hpp"
#include "lab/experiment/slurm_submit.hpp"
#include "lab/experiment/sweep.hpp"
#include "lab/run/device.hpp"
#include "lab/run/run_group.hpp"
#include "lab/run/run_train.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot_compare.hpp"
#include "plots/gnuplot_layers.hpp"
#include "report/chomsky_report.hpp"
#include "report/report.hpp"
#include "report/report_html.hpp"
#include "report/theory_overlay.hpp"
#include "results/run_record.hpp"

namespace lenlab {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// What a figure's runs are: its lines' settings. Two configs agree on a figure when this matches.
std::string figure_fingerprint(const FigureSpec& f) {
  Json j = {{"vary", f.vary}, {"values", f.values}, {"base", to_json(f.base)}};
  return j.dump();
}

// Refuses an output folder whose config.toml defines a figure differently: its runs' results
// would be silently mixed with this config's in the figures.
void check_same_config(const fs::path& out, const ExperimentConfig& config) {
  const fs::path existing = out / "config.toml";
  if (!fs::exists(existing)) return;
  const ExperimentConfig old = load_experiment_config(existing.string());
  for (const FigureSpec& f : config.figures) {
    const FigureSpec* o = old.find(f.name);
    if (o && figure_fingerprint(*o) != figure_fingerprint(f))
      throw UsageError(fmt::format(
          "{} holds results from a different config: figure '{}' has other settings there (see "
          "{}); choose another --out, or delete the folder to start over",
          out.string(), f.name, existing.string()));
  }
}

// The runs whose folders under out/runs do not hold a finished run yet: what a sweep will train.
std::vector<PlannedRun> unfinished(const std::vector<PlannedRun>& runs, const fs::path& out) {
  std::vector<PlannedRun> todo;
  for (const PlannedRun& r : runs)
    if (!run_is_finished(out / "runs" / r.id)) todo.push_back(r);
  return todo;
}

// Up to how many runs the selected figures (all when `figures` is empty) make from `n_seeds` seeds,
// before runs that two figures share are merged.
double count_planned_runs(const ExperimentConfig& config, const std::vector<std::string>& figures,
                          size_t n_seeds) {
  double runs = 0;
  for (const FigureSpec& f : config.figures)
    if (figures.empty() || std::find(figures.begin(), figures.end(), f.name) != figures.end())
      runs += static_cast<double>(f.n_lines()) * (f.vary == "seed"  ? 1
                                                  : f.seeds.empty() ? n_seeds
                                                                    : f.seeds.size());
  return runs;
}

std::vector<uint64_t> chosen_seeds(const ExperimentConfig& config, int n_seeds) {
  if (n_seeds <= 0) return config.seeds;
  std::vector<uint64_t> seeds;
  for (int s = 1; s <= n_seeds; ++s) seeds.push_back(static_cast<uint64_t>(s));
  return seeds;
}

// The cap of --seeds-until-decided (or the config's seeds_until_decided) this command uses; 0:
// none. A job array (--slurm, --emit-slurm) and its tasks (--run-index) train a fixed plan: the
// flag is refused with them, the config's key left out (with a note, but for a task).
int until_decided_cap(const ExperimentOptions& o, const ExperimentConfig& config,
                      const std::vector<uint64_t>& seeds) {
  const bool fixed_plan = o.slurm || !o.emit_slurm.empty() || o.run_index >= 0;
  if (fixed_plan && o.seeds_until_decided != 0)
    throw UsageError(fmt::format(
        "--seeds-until-decided trains round after round, judging between rounds; {} trains a "
        "fixed plan: run the config's seeds there, then lenlab run --seeds-until-decided on the "
        "folder to add seeds",
        o.slurm                ? "--slurm"
        : o.emit_slurm.empty() ? "--run-index"
                               : "--emit-slurm"));
  const int cap = seeds_until_decided_cap(o.seeds_until_decided, o.config_text, o.config_source,
                                          config, o.figures, seeds);
  if (!fixed_plan || cap == 0) return cap;
  if (o.log && o.run_index < 0)
    *o.log << fmt::format(
        "note: {}'s seeds_until_decided = {} is left out: a job array trains the config's seeds "
        "only\n",
        o.config_source, cap);
  return 0;
}

void log_sweep(std::ostream* log, size_t planned, const SweepOutcome& sweep) {
  if (log)
    *log << fmt::format("{} runs: {} trained in {:.0f} s, {} already on disk{}\n", planned,
                        sweep.ran, sweep.seconds, sweep.skipped,
                        sweep.diverged ? fmt::format(", {} diverged", sweep.diverged) : "");
}

}  // namespace

int run_experiment(const ExperimentOptions& options) {
  ExperimentConfig config = parse_experiment_config(options.config_text, options.config_source);
  if (options.n_seeds > 0) use_only_experiment_seeds(config);
  ExperimentOptions o = options;  // with --figures' groups expanded to their figures
  o.figures = select_figures(config, options.figures);
  if (o.out.empty() && !o.dry_run)
    throw UsageError("--out is required: the folder to write the experiment into");
  if (o.dry_run && (!o.emit_slurm.empty() || o.run_index >= 0 || o.slurm))
    throw UsageError(fmt::format(
        "--dry-run trains nothing and writes nothing; it cannot be combined with {}: choose one",
        o.slurm                ? "--slurm"
        : o.emit_slurm.empty() ? "--run-index"
                               : "--emit-slurm"));
  check_slurm_options(o);  // before anything is written: sbatch on PATH with --slurm
  // --slurm and --emit-slurm train nothing here: the cluster's nodes do.
  const bool on_cluster = o.slurm || !o.emit_slurm.empty();
  const fs::path slurm_dir = o.slurm ? o.out / "slurm" : o.emit_slurm;
  if (o.jobs < 1)
    throw UsageError(fmt::format("--jobs must be a positive integer, got {}", o.jobs));
  const size_t n_seeds = o.n_seeds > 0 ? o.n_seeds : config.seeds.size();
  check_plan_size(count_planned_runs(config, o.figures, n_seeds), n_seeds, o.budget);
  const std::vector<uint64_t> seeds = chosen_seeds(config, o.n_seeds);
  const int until_decided = until_decided_cap(o, config, seeds);
  // A figure's init_from is checked here (a folder's run read): its mistake is the config's.
  const std::vector<PlannedRun> runs =
      in_source(o.config_source, [&] { return plan_runs(config, o.figures, seeds); });
  if (o.run_index >= static_cast<int>(runs.size()))
    throw UsageError(
        fmt::format("--run-index {} is out of range: this experiment has {} runs "
                    "(0..{})",
                    o.run_index, runs.size(), runs.size() - 1));
  // What this command trains, and where (SLURM tasks choose their device on their own node).
  Device device;
  std::vector<PlannedRun> todo;
  std::vector<TrainSpec> specs;
  const int jobs = o.run_index >= 0 ? 1 : o.jobs;
  if (!on_cluster) {
    todo = o.run_index >= 0 ? std::vector<PlannedRun>{runs[o.run_index]}
           : o.out.empty()  ? runs
                            : unfinished(runs, o.out);
    for (const PlannedRun& r : todo) specs.push_back(r.spec);
    // float64 runs (--precision) train on the CPU: a sweep holding any does not use the GPU.
    device = Device::choose(
        o.device, std::any_of(specs.begin(), specs.end(),
                              [](const TrainSpec& s) { return s.precision == "float64"; }));
  }
  // Every mistake before anything is written, naming its run of its config (flags are config keys
  // there): the runs to train here admitted in one call (cost/admission.hpp: the cheap bound
  // against --max-time, each run resolved and costed once, the budget, long work announced on the
  // CPU from this core's measured rates), the others (finished in --out, or a cluster's) resolved.
  const auto name = [&](const PlannedRun& r) {
    return fmt::format("{}, run {}", o.config_source, r.id);
  };
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  AdmittedSweep admitted;
  if (!on_cluster)
    admitted = admit_sweep(specs, o.budget, {device.gpu(), jobs, cores, o.cpu_speed},
                           o.dry_run ? nullptr : o.log, [&](size_t i) { return name(todo[i]); });
  std::set<std::string> admitted_ids;
  for (const PlannedRun& r : todo) admitted_ids.insert(r.id);
  for (const PlannedRun& r : runs) {
    if (admitted_ids.count(r.id)) continue;
    try {
      resolve(r.spec);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", name(r), e.what()));
    }
  }
  if (on_cluster)
    for (const PlannedRun& r : runs)
      if (!r.parent.empty())
        throw UsageError(fmt::format(
            "{0}: run {1} fine-tunes run {2} of the same plan (init_from = \"{3}\"), but a "
            "SLURM job array starts its tasks at once; train the parents' figures first (their "
            "own {0}), then the fine-tunes",
            o.slurm ? "--slurm" : "--emit-slurm", r.id, r.parent, r.spec.init_from));
  if (!on_cluster && o.dry_run) {
    DryRunInput in;
    in.config_source = o.config_source;
    in.n_planned = runs.size();
    in.todo = admitted.runs;
    in.jobs = o.jobs;
    in.cores = cores;
    in.gpu = device.gpu();
    if (!in.gpu) {
      in.speeds = cpu_speeds(specs, o.cpu_speed);
      in.sgemm_peak = o.sgemm_peak > 0 ? o.sgemm_peak : measure_sgemm_peak();
    } else {  // the sweep's groups (fine-tunes of runs in the plan grouped with the others)
      std::vector<size_t> order(in.todo.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      in.groups = gpu_groups(order, [&](size_t i) { return gpu_group_key(in.todo[i].spec); });
      for (const std::vector<size_t>& group : in.groups) {
        const SpeedShape shape = speed_shape(in.todo[group[0]].spec);
        if (!in.group_speeds.contains(shape))
          in.group_speeds[shape] = device.measure_group_speed(shape);
      }
      // A measurement that cannot predict (a probe timed at zero): the rough estimate instead.
      if (!std::all_of(in.group_speeds.begin(), in.group_speeds.end(),
                       [](const auto& s) { return usable(s.second); }))
        in.group_speeds.clear();
      in.device_label = device.label();
    }
    in.peak_bytes = admitted.estimate.peak_bytes;
    if (o.print) *o.print << dry_run_report(in);
    if (until_decided > 0 && o.print) {
      std::vector<PlannedRun> added =
          most_added_runs(config, o.figures, seeds, until_decided, runs);
      if (!o.out.empty()) added = unfinished(added, o.out);
      *o.print << fmt::format(
          "--seeds-until-decided {}: up to {} more run(s), not in the time above, while "
          "comparisons stay undecided (their figures' lines on up to {} seeds each)\n",
          until_decided, added.size(), until_decided);
    }
    return kExitOk;
  }
  // A gnuplot that fails, or none, would otherwise be noticed only after all the training.
  if (o.run_index < 0 && o.emit_slurm.empty() && !check_gnuplot(o.plot) && o.log)
    *o.log << gnuplot_missing_message(o.out) << "\n";
  check_same_config(o.out, config);
  // The folders first, --emit-slurm's before --out's: a refusal leaves nothing in --out.
  if (on_cluster)
    for_flag(o.slurm ? "--out" : "--emit-slurm", [&] { ensure_writable_directory(slurm_dir); });
  for_flag("--out", [&] { ensure_writable_directory(o.out / "runs"); });
  remove_stale_temporaries(o.out);  // left by a lenlab killed while writing figures or CSVs
  write_file_atomic(o.out / "config.toml", o.config_text);
  const Selection selection{
      o.figures.empty() ? config.figure_names() : o.figures, seeds, o.n_seeds <= 0, {}};
  write_file_atomic(o.out / "selection.json", selection_json(selection));

  if (on_cluster) {
    const fs::path script = slurm_dir / "lenlab.sbatch";
    std::vector<TrainSpec> all;
    for (const PlannedRun& r : runs) all.push_back(r.spec);
    const SlurmLimits limits = slurm_limits(runs, cpu_speeds(all, o.cpu_speed));
    write_file_atomic(script, slurm_script(o, runs, limits, slurm_dir));
    fs::permissions(script, fs::perms::owner_exec, fs::perm_options::add);
    if (o.slurm) return submit_and_watch(o, runs, script, limits);
    if (o.log)
      *o.log << fmt::format(
          "wrote {} ({} array tasks); submit it with: sbatch {}\nthen draw the "
          "figures with: {} plot {}\n",
          script.string(), runs.size(), script.string(), o.lenlab_path, o.out.string());
    return kExitOk;
  }

  SweepOptions so;
  so.jobs = o.jobs;
  so.device = device;
  so.log = o.log;
  so.log_is_tty = o.log_is_tty;
  so.on_tick = o.on_tick;
  for (size_t i = 0; i < todo.size(); ++i) so.costed[todo[i].id] = &admitted.runs[i];
  if (o.run_index >= 0) {
    so.jobs = 1;
    run_sweep({runs[o.run_index]}, o.out / "runs", so);
    return kExitOk;
  }
  log_sweep(o.log, runs.size(), run_sweep(runs, o.out / "runs", so));
  if (until_decided > 0)
    add_seeds_until_decided(
        o.out, until_decided,
        [&](const std::vector<PlannedRun>& plan) {
          // Each round's new runs admitted as the first ones were (the budget, per round).
          const std::vector<PlannedRun> round = unfinished(plan, o.out);
          std::vector<TrainSpec> round_specs;
          for (const PlannedRun& r : round) round_specs.push_back(r.spec);
          const AdmittedSweep round_admitted =
              admit_sweep(round_specs, o.budget, {device.gpu(), jobs, cores, o.cpu_speed}, o.log,
                          [&](size_t i) { return name(round[i]); });
          SweepOptions round_options = so;
          round_options.costed.clear();
          for (size_t i = 0; i < round.size(); ++i)
            round_options.costed[round[i].id] = &round_admitted.runs[i];
          log_sweep(o.log, plan.size(), run_sweep(plan, o.out / "runs", round_options));
        },
        o.log);
  return plot_experiment(o.out, o.plot, o.log);
}

int plot_experiment(const fs::path& dir, const PlotOptions& plot, std::ostream* log) {
  if (fs::exists(dir / "config.toml") && fs::exists(dir / "selection.json"))
    remove_stale_temporaries(dir);
  const std::unique_ptr<ExperimentFolder> folder = load_experiment_folder(dir);
  const std::vector<std::string>& figures = folder->selection.figures;
  const std::vector<FigureSummary>& summaries = folder->summaries;
  std::string all_rows;
  bool drawn = true;
  for (const FigureSummary& fig : summaries) {
    const std::string& name = fig.spec->name;
    const std::string csv = figure_csv(fig);
    write_file_atomic(dir / ("fig" + name + ".csv"), csv);
    all_rows += all_rows.empty() ? csv : csv.substr(csv.find('\n') + 1);
    drawn = render_figure(fig, dir, plot, theory_curves(fig)) && drawn;
    for (const LayerFigure which :
         {LayerFigure::kStatistics, LayerFigure::kDistance, LayerFigure::kBias})
      if (has_layer_figure(fig, which)) drawn = render_layer_figure(fig, which, dir, plot) && drawn;
    if (log && fig.missing_runs > 0)
      *log << fmt::format("figure {}: {} run(s) missing or diverged\n", name, fig.missing_runs);
  }
  if (const auto compared = compared_figures(summaries); !compared.empty())
    drawn = render_compare_figure(compared, dir, plot) && drawn;
  write_file_atomic(dir / "results.csv", all_rows);
  if (const std::string scores = chomsky_scores_csv(summaries); !scores.empty())
    write_file_atomic(dir / "chomsky_scores.csv", scores);
  const std::string report = experiment_report(summaries, folder->records);
  write_file_atomic(dir / "report.md", report);
  write_file_atomic(dir / "report.html", report_html(report, dir, "lenlab: " + dir.string()));
  if (log) {
    if (!drawn) *log << gnuplot_missing_message(dir) << "\n";
    *log << fmt::format("wrote {} figure(s), their CSVs and {} (and report.html)\n", figures.size(),
                        (dir / "report.md").string());
  }
  return kExitOk;
}

}  // namespace lenlab
