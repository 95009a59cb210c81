#pragma once
// `lenlab eval`: a trained run evaluated again, at any test lengths, without retraining. Reads
// RUN_DIR's manifest.json and model.safetensors and writes into --out:
//   results.csv      one row per test length, the same columns as a trained run's
//   eval.json        what was evaluated: the source run (folder, id, settings), the lengths,
//                    test sequences per length, their seed, the test-time attention (when not as
//                    trained), the device, timings, the command line
//   attention.csv    with --attention-stats: per length, layer and head the mean attention
//                    entropy and largest probability (train/attention_stats.hpp)
//   representation.csv  with --representation-stats: per length and layer, the distance of the
//                    attention outputs from those at l_train (train/representation_stats.hpp)
//   predictions.csv  with --predictions: every test sequence's input and output, one row each
//                    (README's "Evaluating a trained run again" names the columns), for
//                    comparison with another implementation
// Every file is written atomically, eval.json last: a folder whose eval.json exists is complete.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "cost/budget.hpp"
#include "models/config.hpp"
#include "train/evaluate.hpp"
#include "train/inference_attention.hpp"

namespace lenlab {

struct EvalOptions {
  std::filesystem::path run_dir;  // a completed run's folder (lenlab train's --out)
  std::filesystem::path out;      // where to write; may not hold an evaluation unless overwrite
  std::string lengths;            // train/lengths.hpp; "" = the run's own test lengths
  std::string depths;             // passkey (train/lengths.hpp); "" = the run's own
  int samples = 0;                // test sequences per length; 0 = the run's --eval-samples
  uint64_t eval_seed = 0;         // used when has_eval_seed; else the run's --eval-seed
  bool has_eval_seed = false;
  bool predictions = false;             // write predictions.csv
  bool representation_stats = false;    // write representation.csv
  int representation_projections = 64;  // its random directions
  bool overwrite = false;
  std::string device = "auto";
  int threads = 0;              // CPU threads; 0 = the run's --threads
  TestTimeAttention attention;  // Λ-mask, distance cap, temperature; default: as trained
  Budget budget;
  std::string command_line;     // recorded in eval.json
  std::ostream* log = nullptr;  // progress and summary; null = silent
  bool log_is_tty = false;
};

// Returns 0. Throws UsageError, before anything is written, on bad input: no completed run in
// run_dir, weights that do not match its settings, lengths a learned position table cannot reach,
// a reparam that does not hold at the new lengths' targets, work past the budget.
int run_eval(const EvalOptions& options);

}  // namespace lenlab
