#pragma once
// A completed run read back for more work on its weights (lenlab eval, lenlab generate).
#include <filesystem>
#include <optional>
#include <string>

#include "cost/budget.hpp"
#include "models/attention_spec.hpp"
#include "models/config.hpp"
#include "results/run_record.hpp"
#include "tasks/task.hpp"
#include "tasks/text_corpus.hpp"
#include "train/inference_settings.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// The run in `dir` and its task. UsageError when it holds no run or one that did not complete (no
// weights). A text run's corpus is pinned into `pin` for as long as the caller keeps it, and must
// be the one the run trained on (its hash), since its bytes are the vocabulary.
RunRecord open_completed_run(const std::filesystem::path& dir, TaskKind& task,
                             std::optional<CorpusPin>& pin);

// The completed run's settings resolved as when it trained (an error names its manifest.json).
ResolvedSpec resolve_completed(const std::filesystem::path& dir, const TrainSpec& trained);

// UsageError for a test-time setting that is measured on a test set, which `work` (e.g.
// "generation") has not: an auto temperature, the trained distance cap.
void check_attention_without_test_set(const TestTimeAttention& attention, const std::string& work);

// UsageError, before any work, when decoding `tokens` positions (models/decode_memory.hpp) needs
// more memory than --max-memory (or the memory available now), saying how much and what to do:
// `fewer` names the flag that shortens the work (e.g. "write fewer --tokens").
void check_decode_memory(const ModelConfig& config, const AttentionSpec& attention, int64_t tokens,
                         bool float64, const Budget& budget, const std::string& fewer);

}  // namespace lenlab
