#include "lab/run/completed_run.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

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

}  // namespace lenlab
