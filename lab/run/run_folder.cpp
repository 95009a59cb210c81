#include "lab/run/run_folder.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <ctime>
#include <optional>
#include <ostream>
#include <system_error>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/regular_file.hpp"
#include "core/version.hpp"
#include "lab/run/init_from.hpp"
#include "models/checkpoint.hpp"
#include "models/cpu/blas_gemm.hpp"
#include "results/length_files.hpp"
#include "results/loss_file.hpp"
#include "results/position_bias_file.hpp"
#include "results/range_means.hpp"
#include "results/run_manifest.hpp"
#include "results/run_record.hpp"
#include "tasks/text_corpus.hpp"
#include "theory/power_law.hpp"

namespace lenlab {

namespace {

namespace fs = std::filesystem;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
}

std::string inverse_kind(const Reparam& r) {
  if (r.is_builtin()) return "closed form";
  if (r.uses_numerical_inverse()) return "numerical (bisection)";
  return r.is_custom() ? "Python function" : "expression";
}

// Whether `dir` holds this very run, unfinished ("running": killed, or stopped by a full disk):
// training it again needs no --overwrite, so the same command resumes it.
bool unfinished_same_run(const fs::path& dir, const TrainSpec& spec) {
  try {
    const std::optional<RunRecord> found = load_run(dir, /*with_results=*/false);
    return found && found->status == "running" &&
           canonical_spec_text(found->spec) == canonical_spec_text(spec);
  } catch (const UsageError&) {  // a manifest cut short by the kill: not provably this run
    return false;
  }
}

std::string absolute_path(const fs::path& p) {
  return fs::absolute(p).lexically_normal().string();
}

// Whether a and b name one file, resolved: through symbolic links and "..", by the file itself
// (a hard link) where both exist.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ec);
  if (ec) return absolute_path(a) == absolute_path(b);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b), ec);
  return ec ? absolute_path(a) == absolute_path(b) : ca == cb;
}

// --save-init and --save-batches: distinct, none of the run's own files (which the run writes
// over) nor, when fine-tuning, of the parent run's (whose weights it starts from), then writable
// (which may create their folders: the pure checks come first).
void check_saved_paths(const RunOptions& options, const std::vector<std::string>& own,
                       const std::string& init_from) {
  std::vector<std::pair<std::string, fs::path>> paths;
  if (!options.save_init.empty()) paths.push_back({"--save-init", options.save_init});
  if (!options.save_batches.empty()) paths.push_back({"--save-batches", options.save_batches});
  for (const auto& [flag, path] : paths) {
    for (const std::string& name : own) {
      if (same_file(path, options.out / name))
        throw UsageError(fmt::format(
            "{} {}: that is the run's own {}, which the run writes; choose another file", flag,
            path.string(), name));
      if (!init_from.empty() && same_file(path, fs::path(init_from) / name))
        throw UsageError(fmt::format(
            "{} {}: that is the {} of the run it fine-tunes (--init-from {}), which would be "
            "replaced; choose another file",
            flag, path.string(), name, init_from));
    }
  }
  if (paths.size() == 2 && same_file(paths[0].second, paths[1].second))
    throw UsageError(
        fmt::format("--save-init and --save-batches name the same file {}; give each its own",
                    paths[0].second.string()));
  for (const auto& [flag, path] : paths) ensure_writable_file(path, flag);
}

}  // namespace

RunFolder::RunFolder(const TrainSpec& spec, const ResolvedSpec& resolved, const RunOptions& options,
                     const std::string& device, size_t n_parameters)
    : spec_(spec), model_(resolved.model), options_(options), start_(now_seconds()) {
  const fs::path manifest_path = options.out / "manifest.json";
  if (options.out.empty()) throw UsageError("--out is required: the folder to write the run into");
  if (!options.overwrite && fs::exists(manifest_path) && !unfinished_same_run(options.out, spec))
    throw UsageError(
        fmt::format("{} already holds a run ({}); pass --overwrite to replace it, or "
                    "choose another --out",
                    options.out.string(), manifest_path.filename().string()));
  // A replaced run's outputs belong to other settings: none may survive beside the new manifest
  // (a diverged run, say, writes no results.csv).
  std::vector<std::string> own = length_file_names();
  for (const char* name : {"loss.csv", "model.safetensors", "manifest.json", "position_bias.csv"})
    own.push_back(name);
  check_saved_paths(options, own, spec.init_from);
  // A run's own file that is a device or a FIFO (a link to /dev/null, say) is refused, not removed.
  for (const std::string& name : own) check_output_path(options.out / name, "--out's");
  std::optional<ParentRun> parent;  // --init-from: read before anything here is removed
  if (!spec.init_from.empty()) {
    std::error_code ec;
    if (fs::equivalent(spec.init_from, options.out, ec))
      throw UsageError(fmt::format(
          "--init-from {} is this run's own --out: fine-tuning would replace the weights it "
          "starts from; give the fine-tuned run another --out",
          spec.init_from));
    parent = load_parent(spec);
  }
  for_flag("--out", [&] { ensure_writable_directory(options.out); });
  remove_stale_temporaries(options.out);  // left by a run killed while writing
  for (const std::string& stale : own) fs::remove(options.out / stale);
  if (!options.save_batches.empty()) batch_log_ = std::make_unique<BatchLog>(options.save_batches);

  manifest_["lenlab_version"] = version();
  manifest_["git_revision"] = git_revision();
  manifest_["command_line"] = options.command_line;
  manifest_["started_at"] = utc_now();
  manifest_["status"] = "running";
  manifest_["device"] = device;
  if (device == "cpu")  // which kernel the float linear layers ran on (models/cpu/blas_gemm.hpp)
    manifest_["cpu_matmul"] =
        spec.precision == "float64" ? "Eigen (float64)" : cpu::gemm_kernel_description();
  manifest_["config"] = to_json(spec);
  if (task_reads_corpus(resolved.task)) {  // which text it learned: lenlab eval checks the hash
    const auto corpus = open_corpus(spec.token.corpus);
    manifest_["corpus"] = {{"path", absolute_path(corpus->path())},
                           {"bytes", corpus->bytes()},
                           {"hash", corpus->hash()},
                           {"symbols", corpus->n_symbols()},
                           {"block_bytes", corpus->block_size()},
                           {"training_bytes", corpus->split_bytes(CorpusSplit::kTrain)},
                           {"validation_bytes", corpus->split_bytes(CorpusSplit::kValidation)},
                           {"test_bytes", corpus->split_bytes(CorpusSplit::kTest)}};
  }
  if (parent)  // config holds its id (init_parent); here also where it was and what it was
    manifest_["init_from"] = {{"path", absolute_path(parent->dir)},
                              {"run_id", parent->id},
                              {"config", to_json(parent->spec)}};
  manifest_["derived"] = {
      {"n_parameters", n_parameters},
      {"learned_position_rows", positional_encoding_info(resolved.model.pe).learned_table()
                                    ? resolved.model.max_positions
                                    : 0},
      {"reparam_inverse", inverse_kind(resolved.reparam)}};
  // Where the comparison files went (tools/torch_reference finds them here).
  if (!options.save_init.empty()) manifest_["init_checkpoint"] = absolute_path(options.save_init);
  if (!options.save_batches.empty()) manifest_["batch_log"] = absolute_path(options.save_batches);
  write_file_atomic(manifest_path, manifest_.dump(2) + "\n");
}

double RunFolder::wall_seconds() const {
  return now_seconds() - start_;
}

template <class T>
void RunFolder::write_init(const std::vector<T>& params) const {
  if (options_.save_init.empty()) return;
  save_checkpoint(options_.save_init, model_, params.data(),
                  {{"format", "lenlab"},
                   {"config", to_json(spec_).dump()},
                   {"git_revision", git_revision()},
                   {"step", "0"}});
}

template void RunFolder::write_init(const std::vector<float>&) const;
template void RunFolder::write_init(const std::vector<double>&) const;

void RunFolder::write_diverged(const TrainOutcome& outcome) {
  if (batch_log_) batch_log_->commit();
  write_file_atomic(options_.out / "loss.csv", loss_csv_text(outcome.log, spec_.misalign));
  add_diverged_entries(manifest_, outcome);
  manifest_["wall_seconds"] = wall_seconds();
  write_file_atomic(options_.out / "manifest.json", manifest_.dump(2) + "\n");
  if (options_.log)
    *options_.log << "lenlab: error: " << manifest_["error"].get<std::string>() << "\n";
}

void RunFolder::write_completed(const TrainOutcome& outcome,
                                const std::vector<LengthResult>& results, double eval_seconds,
                                const std::vector<double>& params) {
  if (batch_log_) batch_log_->commit();
  write_file_atomic(options_.out / "loss.csv", loss_csv_text(outcome.log, spec_.misalign));
  const std::vector<std::string> length_files = write_length_files(options_.out, results);
  const bool token = !results.empty() && results.front().token;
  // The encoding's bias after training, at every distance the tests met (002's Figure 1).
  const std::string bias_csv = position_bias_csv_text(model_, params, model_.max_positions - 1);
  if (!bias_csv.empty()) write_file_atomic(options_.out / "position_bias.csv", bias_csv);
  const std::map<std::string, std::string> meta = {
      {"format", "lenlab"}, {"config", to_json(spec_).dump()}, {"git_revision", git_revision()}};
  if (spec_.precision == "float64") {
    save_checkpoint(options_.out / "model.safetensors", model_, params.data(), meta);
  } else {
    const std::vector<float> rounded(params.begin(), params.end());  // float weights: exact
    save_checkpoint(options_.out / "model.safetensors", model_, rounded.data(), meta);
  }

  // The headline metric within and beyond the training lengths (results/run_manifest.hpp), and
  // how the test error grows past l_train: c·(l − a)^p (theory/power_law.hpp).
  const bool markov = spec_.task == "markov";
  const Headline headline = headline_of(spec_, results);
  const RangeMeans& means = headline.means;
  const int n_in_range = means.n_within, n_beyond = means.n_beyond;
  const double in_range = means.within_sum, beyond = means.beyond_sum;
  std::vector<int> lengths;
  std::vector<double> mse;
  for (const LengthResult& r : results) {
    lengths.push_back(r.length);
    mse.push_back(r.mse);
  }
  const PowerLawFit growth =
      token ? PowerLawFit{} : fit_error_growth(spec_.task, spec_.l_train, lengths, mse);
  add_completed_entries(manifest_, outcome, headline, eval_seconds);
  if (growth.ok())
    manifest_["error_growth_fit"] = {{"p", growth.p}, {"a", growth.a}, {"c", growth.c}};
  manifest_["wall_seconds"] = wall_seconds();
  std::vector<std::string> files = {"manifest.json", "loss.csv", "model.safetensors"};
  files.insert(files.end(), length_files.begin(), length_files.end());
  if (!bias_csv.empty()) files.push_back("position_bias.csv");
  files =
      in_listing_order(std::move(files), {"manifest.json", "loss.csv", "results.csv",
                                          "model.safetensors", "positions.csv", "position_bias.csv",
                                          "attention.csv", "attention_distance.csv"});
  manifest_["files"] = files;
  write_file_atomic(options_.out / "manifest.json", manifest_.dump(2) + "\n");

  if (std::ostream* log = options_.log) {
    // Means over the test lengths within and beyond the training range (all of 1..l_test unless
    // --lengths chose some).
    if (token)
      *log << fmt::format("final train loss ({}, last 100 steps) {:.3e}; test {}:",
                          spec_.misalign.on()
                              ? fmt::format("cross-entropy + {} x {}", spec_.misalign.alpha,
                                            spec_.misalign.kind == "kl" ? "symmetric KL divergence"
                                                                        : "misalignment")
                          : spec_.misalign.control ? "cross-entropy on the regularizer's views"
                                                   : "cross-entropy",
                          outcome.final_loss(),
                          markov                 ? "excess cross-entropy"
                          : spec_.task == "text" ? "cross-entropy (nats per character)"
                                                 : "token accuracy");
    else
      *log << fmt::format("final train loss (on f(y), last 100 steps) {:.3e}; test mse on y:",
                          outcome.final_loss());
    const bool every = spec_.lengths.empty();
    if (n_in_range > 0)
      *log << fmt::format(" {:.3e} for {}", in_range / n_in_range,
                          every
                              ? fmt::format("lengths {}..{}", results.front().length, spec_.l_train)
                              : fmt::format("{} lengths <= {}", n_in_range, spec_.l_train));
    if (n_beyond > 0)
      *log << fmt::format("{} {:.3e} for {}", n_in_range > 0 ? "," : "", beyond / n_beyond,
                          every ? fmt::format("{}..{}", spec_.l_train + 1, spec_.l_test)
                                : fmt::format("{} lengths > {}", n_beyond, spec_.l_train));
    if (manifest_.contains("until_fit")) {
      const auto& u = manifest_["until_fit"];
      const std::string reason = u["reason"].get<std::string>();
      *log << fmt::format("\n--until-fit: {} after step {} of {} ({} validation checks; rule: {})",
                          reason == "fit" ? "fit its training range"
                          : reason == "stalled"
                              ? fmt::format("stopped, no better validation score in {} checks",
                                            u["patience"].get<int>())
                              : "did not fit within --steps",
                          u["steps_trained"].get<int>(), spec_.steps, u["check_steps"].size(),
                          u["rule"].get<std::string>());
    }
    if (manifest_.contains("misalignment")) {
      const auto& m = manifest_["misalignment"];
      *log << fmt::format("\nlong-short misalignment at suffix lengths {}..{}: {:.3e} ({})",
                          m["suffix_lengths"][0].get<int>(), m["suffix_lengths"][1].get<int>(),
                          m["value"].get<double>(), m["measure"].get<std::string>());
      if (m.contains("divergence"))
        *log << fmt::format(
            " = divergence {:.3e} + entropies {:.3e}; a perfect model: {:.3e} = {:.3e} + {:.3e}",
            m["divergence"].get<double>(), m["entropy"].get<double>(),
            m["perfect"]["value"].get<double>(), m["perfect"]["divergence"].get<double>(),
            m["perfect"]["entropy"].get<double>());
    }
    *log << fmt::format("\nwrote {}/{{{}}}\n", options_.out.string(), fmt::join(files, ", "));
  }
}

}  // namespace lenlab
