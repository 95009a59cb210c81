#include "lab/run_train.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <omp.h>
#include <Eigen/Core>

#include <chrono>
#include <ctime>
#include <optional>
#include <ostream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/progress.hpp"
#include "lab/checkpoint.hpp"
#include "lab/evaluate.hpp"
#include "lab/run_record.hpp"
#include "lab/trainer.hpp"
#include "theory/power_law.hpp"

namespace lenlab {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
}

std::string loss_csv(const std::vector<StepLog>& log) {
  std::string out = "step,lr,loss,grad_norm\n";
  for (const StepLog& s : log)
    out += fmt::format("{},{:.6g},{:.9g},{:.6g}\n", s.step, s.lr, s.loss, s.grad_norm);
  return out;
}

std::string inverse_kind(const Reparam& r) {
  if (r.is_builtin()) return "closed form";
  return r.uses_numerical_inverse() ? "numerical (bisection)" : "expression";
}

}  // namespace

int run_train(const TrainSpec& spec, const RunOptions& options) {
  const ResolvedSpec resolved = resolve(spec);
  const fs::path manifest_path = options.out / "manifest.json";
  if (options.out.empty()) throw UsageError("--out is required: the folder to write the run into");
  if (!options.overwrite && fs::exists(manifest_path))
    throw UsageError(
        fmt::format("{} already holds a run ({}); pass --overwrite to replace it, or "
                    "choose another --out",
                    options.out.string(), manifest_path.filename().string()));
  ensure_writable_directory(options.out);
  // A replaced run's outputs belong to other settings: none may survive beside the new manifest
  // (a diverged run, say, writes no results.csv).
  for (const char* stale : {"results.csv", "loss.csv", "model.safetensors", "manifest.json"})
    fs::remove(options.out / stale);

  omp_set_num_threads(spec.threads);  // this thread's OpenMP team size (attention)
  // Eigen's thread count is process-wide: only write it when it changes, so that runs side by side
  // in a sweep (which sets it once, before starting them) never write it concurrently.
  if (Eigen::nbThreads() != spec.threads) Eigen::setNbThreads(spec.threads);
  const auto wall_start = std::chrono::steady_clock::now();

  Transformer<float> model(resolved.model);
  model.init(spec.seed);

  Json manifest;
  manifest["lenlab_version"] = "0.1.0";
  manifest["git_revision"] = git_revision();
  manifest["command_line"] = options.command_line;
  manifest["started_at"] = utc_now();
  manifest["status"] = "running";
  manifest["device"] = "cpu";
  manifest["config"] = to_json(spec);
  manifest["derived"] = {
      {"n_parameters", model.num_parameters()},
      {"learned_position_rows",
       resolved.model.pe == PositionalEncoding::kLearned ? resolved.model.max_positions : 0},
      {"reparam_inverse", inverse_kind(resolved.reparam)}};
  write_file_atomic(manifest_path, manifest.dump(2) + "\n");

  std::ostream* log = options.log;
  std::optional<Progress> bar;
  if (log) bar.emplace("train", spec.steps, *log, options.log_is_tty);
  const TrainOutcome outcome = train(model, spec, resolved, [&](int step, double loss) {
    if (bar) bar->update(step, fmt::format("loss {:.3e}", loss));
    if (options.on_unit_done) options.on_unit_done();
  });
  if (bar) bar->finish();
  write_file_atomic(options.out / "loss.csv", loss_csv(outcome.log));

  manifest["train_seconds"] = outcome.seconds;
  manifest["steps_per_second"] = outcome.log.size() / std::max(outcome.seconds, 1e-9);
  if (outcome.diverged) {
    manifest["status"] = "diverged";
    manifest["diverged_at_step"] = outcome.diverged_step;
    manifest["error"] = fmt::format(
        "the training loss or gradient became non-finite at step {}; try a smaller --lr or a "
        "reparam with a narrower target range",
        outcome.diverged_step);
    manifest["wall_seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    write_file_atomic(manifest_path, manifest.dump(2) + "\n");
    if (log) *log << "lenlab: error: " << manifest["error"].get<std::string>() << "\n";
    return kExitDiverged;
  }

  const auto eval_start = std::chrono::steady_clock::now();
  if (log) bar.emplace("eval", spec.l_test, *log, options.log_is_tty);
  const std::vector<LengthResult> results =
      evaluate(model, resolved.task, resolved.reparam, spec.l_test, spec.eval_samples,
               spec.eval_seed, [&](int l) {
                 if (bar) bar->update(l, fmt::format("length {}", l));
                 if (options.on_unit_done) options.on_unit_done();
               });
  if (bar) bar->finish();
  const double eval_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
  write_file_atomic(options.out / "results.csv", results_csv_text(results));

  std::map<std::string, std::string> meta = {
      {"format", "lenlab"}, {"config", to_json(spec).dump()}, {"git_revision", git_revision()}};
  save_checkpoint(options.out / "model.safetensors", model, meta);

  double in_range = 0, beyond = 0;
  for (const LengthResult& r : results) (r.length <= spec.l_train ? in_range : beyond) += r.mse;
  const int n_beyond = spec.l_test - spec.l_train;
  std::vector<int> lengths;
  std::vector<double> mse;
  for (const LengthResult& r : results) {
    lengths.push_back(r.length);
    mse.push_back(r.mse);
  }
  const PowerLawFit growth = fit_error_growth(spec.task, spec.l_train, lengths, mse);
  manifest["status"] = "completed";
  manifest["final_train_loss"] = outcome.final_loss();
  manifest["last_step_loss"] = outcome.log.back().loss;
  manifest["eval_seconds"] = eval_seconds;
  manifest["mean_test_mse_within_l_train"] = in_range / spec.l_train;
  if (n_beyond > 0) manifest["mean_test_mse_beyond_l_train"] = beyond / n_beyond;
  if (growth.ok())  // how the test error grows past l_train: c·(l − a)^p (theory/power_law.hpp)
    manifest["error_growth_fit"] = {{"p", growth.p}, {"a", growth.a}, {"c", growth.c}};
  manifest["wall_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  manifest["files"] = {"manifest.json", "loss.csv", "results.csv", "model.safetensors"};
  write_file_atomic(manifest_path, manifest.dump(2) + "\n");

  if (log) {
    *log << fmt::format(
        "final train loss (on f(y), last 100 steps) {:.3e}; test mse on y: {:.3e} "
        "for lengths 1..{}",
        outcome.final_loss(), in_range / spec.l_train, spec.l_train);
    if (n_beyond > 0)
      *log << fmt::format(", {:.3e} for {}..{}", beyond / n_beyond, spec.l_train + 1, spec.l_test);
    *log << fmt::format("\nwrote {}/{{manifest.json, results.csv, loss.csv, model.safetensors}}\n",
                        options.out.string());
  }
  return kExitOk;
}

}  // namespace lenlab
