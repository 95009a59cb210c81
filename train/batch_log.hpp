#pragma once
// The batch log (`lenlab train --save-batches FILE`): every training step's batch exactly as the
// model saw it, so that another implementation can train on lenlab's data stream step for step
// (tools/torch_reference). JSON Lines, one object per step, in step order:
//   {"step": 1,                          1-based, as loss.csv
//    "tokens": [...], "positions": [...], "offsets": [...],     the packed batch (tasks/batch.hpp)
//    "scalar_rows": [...], "scalar_targets": [...], "scalar_weights": [...],
//    "token_rows": [...], "token_labels": [...], "token_weights": [...],
//    "pair_first": [...], "pair_second": [...], "pair_weights": [...],
//    "pair_entropy_weights": [...]}
// The scalar targets are f(y), what the loss compares with (after the reparam and its shift); the
// weights are the loss weights the trainer applies (Batch::weight). Readouts a batch does not have
// are left out. Numbers are written in the shortest form that reads back to the same double.
// Written through a temporary renamed at the end: a killed run leaves no half log.
#include <filesystem>
#include <string>

#include "core/atomic_file.hpp"
#include "tasks/batch.hpp"

namespace lenlab {

class BatchLog {
 public:
  // Creates the temporary beside `path`: UsageError naming the path when it cannot be written.
  explicit BatchLog(const std::filesystem::path& path);

  // One step's line. f_targets [batch.n_read()].
  void append(int step, const Batch& batch, const double* f_targets);
  // The whole log appears at `path`.
  void commit() { file_.commit(); }

 private:
  AtomicFileWriter file_;
};

// The line append() writes, without its newline.
std::string batch_log_line(int step, const Batch& batch, const double* f_targets);

}  // namespace lenlab
