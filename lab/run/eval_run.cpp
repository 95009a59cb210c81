#include "lab/run/eval_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/regular_file.hpp"
#include "cost/admission.hpp"
#include "lab/run/completed_run.hpp"
#include "lab/run/device.hpp"
#include "models/checkpoint.hpp"
#include "models/parameters.hpp"
#include "results/eval_record.hpp"
#include "results/length_files.hpp"
#include "results/predictions_file.hpp"
#include "results/run_record.hpp"
#include "tasks/text_corpus.hpp"
#include "train/eval_plan.hpp"
#include "train/inference_eval.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

// predictions.csv's size: a row per test sequence (enumerated or sampled) holding its input, and
// for a token task (every depth) its tokens and answer rows (at most ~20 characters each).
double prediction_bytes(const ResolvedSpec& r, const TrainSpec& spec) {
  const int samples = spec.eval_samples;
  double bytes = 0;
  for (const int l : r.test_lengths) {
    if (is_token_task(r.task)) {
      bytes += r.depths.size() * samples *
               (20.0 * static_cast<double>(tokens_per_sequence(r.task, spec.token, l)) + 100);
      continue;
    }
    const double n = l < 60 ? std::min<double>(samples, std::ldexp(1.0, l)) : samples;
    bytes += n * (l + 100.0);
  }
  return bytes;
}

}  // namespace

int run_eval(const EvalOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // ---- the source run and what to evaluate: every mistake before anything is written
  const EvalChanges changes{o.lengths,       o.depths,  o.samples,  o.eval_seed,
                            o.has_eval_seed, o.threads, o.attention};
  check_eval_changes(changes);  // the flags first
  if (o.representation_stats && (o.representation_projections < 1 ||
                                 o.representation_projections > kMaxRepresentationProjections))
    throw UsageError(fmt::format("--representation-projections must be in 1..{}, got {}",
                                 kMaxRepresentationProjections, o.representation_projections));
  // A text run's corpus, pinned for the whole evaluation.
  std::optional<CorpusPin> corpus_pin;
  TaskKind task{};
  const RunRecord record = open_completed_run(o.run_dir, task, corpus_pin);
  const TrainSpec& trained = record.spec;
  const std::string manifest = (o.run_dir / "manifest.json").string();
  const EvalPlan plan = plan_evaluation(trained, changes, manifest);
  const ResolvedSpec& model_spec = plan.trained;
  const ModelConfig& config = model_spec.model;
  const TrainSpec& spec = plan.spec;
  const ResolvedSpec& resolved = plan.resolved;
  const std::vector<int>& lengths = resolved.test_lengths;

  const Device device = Device::choose(o.device, model_spec.float64);
  std::vector<CostPart> extra;
  if (o.predictions)
    extra.push_back(
        {"predictions.csv", prediction_bytes(resolved, spec),
         fmt::format("--lengths {}, --samples {}", format_lengths(lengths), spec.eval_samples)});
  // The evaluation's settings, costed on the model it evaluates (trained at its own lengths).
  ResolvedSpec evaluated = resolved;
  evaluated.model = config;
  admit_evaluation(CostedRun(spec, std::move(evaluated)), o.budget, {.gpu = device.gpu()}, extra,
                   o.log);

  if (o.out.empty()) throw UsageError("--out is required: the folder to write the evaluation into");
  if (!o.overwrite && fs::exists(o.out / "eval.json"))
    throw UsageError(fmt::format(
        "{} already holds an evaluation (eval.json); pass --overwrite to replace it, or choose "
        "another --out",
        o.out.string()));
  if (fs::exists(o.out / "manifest.json"))
    throw UsageError(fmt::format(
        "{} holds a trained run (manifest.json); write the evaluation into another --out",
        o.out.string()));
  // A file of the evaluation's that is a device or a FIFO is refused, not removed nor replaced.
  for (const std::string& name : length_file_names()) check_output_path(o.out / name, "--out's");
  for (const char* name : {"eval.json", "predictions.csv"})
    check_output_path(o.out / name, "--out's");
  const std::vector<double> params = load_checkpoint(o.run_dir / "model.safetensors", config);
  for_flag("--out", [&] { ensure_writable_directory(o.out); });
  remove_stale_temporaries(o.out);
  // A replaced evaluation's files
  for (const std::string& stale : length_file_names()) fs::remove(o.out / stale);
  for (const char* stale : {"eval.json", "predictions.csv"}) fs::remove(o.out / stale);

  // ---- evaluate
  std::optional<PredictionWriter> predictions;
  std::optional<TokenPredictionWriter> token_predictions;
  EvalJob job = eval_job(resolved, spec);
  if (o.representation_stats) {
    job.representation_projections = o.representation_projections;
    job.representation_reference = trained.l_train;
  }
  if (o.predictions && is_token_task(resolved.task)) {
    token_predictions.emplace();
    job.on_token_output = [&](const Batch& b, int length, double depth, int s,
                              const std::vector<double>& p, const std::vector<int>& argmax) {
      token_predictions->add(b, length, depth, s, p, argmax);
    };
  } else if (o.predictions) {
    predictions.emplace(resolved.reparam);
    job.on_output = [&](const Batch& b, int s, double z) { predictions->add(b, s, z); };
  }
  const RunCost cost = estimate_run_cost(spec, config);
  std::optional<Progress> bar;
  if (o.log) {
    bar.emplace("eval", static_cast<int64_t>(cost.eval_flops / kFlopsPerProgressUnit) + 1, *o.log,
                o.log_is_tty);
    bar->show_counts(false);
  }
  double done = 0;
  const auto on_length = [&](int, int l) {
    done += cost.eval_flops_at(l);
    if (bar)
      bar->update(static_cast<int64_t>(done / kFlopsPerProgressUnit),
                  fmt::format("length {}/{}", l, lengths.back()));
  };
  const auto eval_start = Clock::now();
  const auto run = [&](const EvalJob& j, const std::function<void(int, int)>& progress) {
    return device.evaluate(config, params, j, spec.threads, model_spec.float64, progress);
  };
  // An auto temperature: searched per length past l_train, then every length evaluated with its
  // own (train/inference_eval.hpp).
  if (const std::optional<AlignBy> by = temperature_alignment(o.attention); by && o.log)
    *o.log << fmt::format("searching the attention temperature ({}) at each length past {}\n",
                          align_name(*by), trained.l_train);
  const TemperatureChoice temperatures = prepare_test_time_eval(
      job, spec, config, params, [&](const EvalJob& j) { return run(j, {}); });
  const std::vector<LengthResult> results = run(job, on_length);
  if (bar) bar->finish();
  const double eval_seconds = std::chrono::duration<double>(Clock::now() - eval_start).count();

  // ---- write: results, predictions, and eval.json last
  std::vector<std::string> files = {"eval.json"};
  for (const std::string& name : write_length_files(o.out, results)) files.push_back(name);
  if (predictions || token_predictions) {
    write_file_atomic(o.out / "predictions.csv",
                      predictions ? predictions->text() : token_predictions->text());
    files.push_back("predictions.csv");
  }
  files = in_listing_order(std::move(files),
                           {"eval.json", "results.csv", "predictions.csv", "attention.csv",
                            "attention_distance.csv", "representation.csv", "positions.csv"});
  EvalRecord info;
  info.command_line = o.command_line;
  info.source_dir = o.run_dir;
  info.source_id = record.id;
  info.source = trained;
  info.lengths = lengths;
  info.eval_samples = spec.eval_samples;
  info.eval_seed = spec.eval_seed;
  info.attention = o.attention;
  info.applied = job.attention;  // a cap "trained" resolved on the model
  info.temperatures = temperatures;
  if (o.representation_stats) info.representation_projections = o.representation_projections;
  info.threads = spec.threads;
  info.device = device.label();
  info.eval_seconds = eval_seconds;
  info.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  info.files = files;
  write_file_atomic(o.out / "eval.json", eval_json_text(info));
  if (o.log)
    *o.log << fmt::format("evaluated {} length{} ({}) in {:.1f} s; wrote {}/{{{}}}\n",
                          lengths.size(), lengths.size() == 1 ? "" : "s", format_lengths(lengths),
                          eval_seconds, o.out.string(), fmt::join(files, ", "));
  return 0;
}

}  // namespace lenlab
