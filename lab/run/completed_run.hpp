#pragma once
// A completed run read back for more work on its weights (lenlab eval, lenlab generate).
#include <filesystem>
#include <optional>

#include "results/run_record.hpp"
#include "tasks/task.hpp"
#include "tasks/text_corpus.hpp"

namespace lenlab {

// The run in `dir` and its task. UsageError when it holds no run or one that did not complete (no
// weights). A text run's corpus is pinned into `pin` for as long as the caller keeps it, and must
// be the one the run trained on (its hash), since its bytes are the vocabulary.
RunRecord open_completed_run(const std::filesystem::path& dir, TaskKind& task,
                             std::optional<CorpusPin>& pin);

}  // namespace lenlab
