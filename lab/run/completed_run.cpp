#include "lab/run/completed_run.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/decode_memory.hpp"
#include "train/inference_attention.hpp"

namespace lenlab {

RunRecord open_completed_run(const std::filesystem::path& dir, TaskKind& task,
                             std::optional<CorpusPin>& pin) {
  std::optional<RunRecord> record = load_run(dir, /*with_results=*/false);
  if (!record)
    throw UsageError(
        fmt::format("{} holds no run (no manifest.json); give a folder that lenlab "
                    "train (or a sweep, under runs/) wrote",
                    dir.string()));
  if (record->status != "completed")
    throw UsageError(
        fmt::format("the run in {} is '{}': only a completed run has weights to "
                    "evaluate",
                    dir.string(), record->status));
  const std::string manifest = (dir / "manifest.json").string();
  task = in_source(
      manifest, [&] { return for_flag("--task", [&] { return parse_task(record->spec.task); }); });
  if (task_reads_corpus(task)) {
    // The bytes whose hash is checked here are the bytes used, even if the file is replaced
    // meanwhile.
    const auto& corpus = pin.emplace(record->spec.token.corpus).corpus();
    if (corpus->hash() != record->corpus_hash)
      throw UsageError(fmt::format(
          "corpus {} changed since the run in {} was trained: its hash is {}, the run's manifest "
          "says {}; restore the file the run was trained on",
          corpus->path(), dir.string(), corpus->hash(),
          record->corpus_hash.empty() ? "none" : record->corpus_hash));
  }
  return *record;
}

ResolvedSpec resolve_completed(const std::filesystem::path& dir, const TrainSpec& trained) {
  return in_source((dir / "manifest.json").string(), [&] { return resolve(trained); });
}

void check_attention_without_test_set(const TestTimeAttention& attention, const std::string& work) {
  if (temperature_alignment(attention))
    throw UsageError(fmt::format(
        "--temperature {} is searched per test length on a test set, which {} has not: give a "
        "number (lenlab eval's eval.json lists the temperatures a search chose)",
        attention.temperature, work));
  if (attention.distance_cap == "trained")
    throw UsageError(fmt::format(
        "--distance-cap trained is found from the test lengths, which {} has not: give the "
        "distance (lenlab eval's eval.json records the one it resolved)",
        work));
}

void check_decode_memory(const ModelConfig& config, const AttentionSpec& attention, int64_t tokens,
                         bool float64, const Budget& budget, const std::string& fewer) {
  // Past an int's positions nothing is allocated: say so as too much memory.
  const DecodeMemory need = tokens > INT32_MAX
                                ? DecodeMemory{1e30, 0}
                                : decode_memory(config, attention, static_cast<int>(tokens),
                                                float64 ? sizeof(double) : sizeof(float));
  const double limit = budget.max_memory.empty() ? available_memory_bytes()
                                                 : parse_size(budget.max_memory, "--max-memory");
  if (need.total() <= limit) return;
  throw UsageError(fmt::format(
      "{} positions need a key-value cache of {} and tables by position of {}, more than {} "
      "(--max-memory{}): {}, raise --max-memory, or give a Λ-mask (--n-local) and a distance cap "
      "(--distance-cap), whose cache keeps only the keys its queries see and whose tables stop at "
      "the cap",
      tokens, format_bytes(need.cache_bytes), format_bytes(need.tables_bytes), format_bytes(limit),
      budget.max_memory.empty() ? ", the memory available now" : "", fewer));
}

}  // namespace lenlab
