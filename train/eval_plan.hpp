#pragma once
// A trained run's settings changed for an evaluation (`lenlab eval`, lab/run/eval_run.cpp): the
// flags checked on their own first, then applied to the run's settings and resolved, with the
// reach of a learned position table or of randomized positions checked. Every mistake is a
// UsageError before anything runs.
#include <cstdint>
#include <string>

#include "tasks/batch.hpp"
#include "train/inference_attention.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// What an evaluation may change; empty or 0: as trained.
struct EvalChanges {
  std::string lengths;  // --lengths (train/lengths.hpp)
  std::string depths;   // --depths, passkey only
  int samples = 0;      // --samples: test sequences per length
  uint64_t eval_seed = 0;
  bool has_eval_seed = false;
  int threads = 0;
  TestTimeAttention attention;  // Λ-mask, distance cap, temperature
};

// The flags alone (lengths, depths, temperature and its search grid), before the run is read.
void check_eval_changes(const EvalChanges& changes);

struct EvalPlan {
  ResolvedSpec trained;     // the run's model as it was trained
  TrainSpec spec;           // the evaluation's settings: the run's, changed
  ResolvedSpec resolved;    // resolve(spec): test lengths, depths, reparam checked there
  AttentionSpec attention;  // the test-time attention for this run
};

// `trained` (a completed run's settings) changed by `changes`. `source` (its manifest.json) is
// named in a UsageError that `trained` itself causes (a manifest edited by hand); "" names nothing.
EvalPlan plan_evaluation(const TrainSpec& trained, const EvalChanges& changes,
                         const std::string& source = "");

}  // namespace lenlab
