#pragma once
// manifest.json, a run's record: its folder (lab/run/run_folder.cpp) writes it when the run
// starts (status "running") and again when it ends; load_run (results/run_record.hpp) and
// theory/measured_runs.hpp read it back. The entries a finished run adds are composed here, beside
// that reader: the status, seconds, losses and the headline metric within and beyond l_train.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/range_means.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"
#include "train/trainer.hpp"

namespace lenlab {

// A finished run's headline: test MSE on y, or a token task's accuracy (markov: excess
// cross-entropy), averaged within and beyond the training lengths (over every depth).
struct Headline {
  std::string
      metric;  // "test_mse", "token_accuracy", "excess_ce" (markov) or "cross_entropy" (text)
  RangeMeans means;
};
Headline headline_of(const TrainSpec& spec, const std::vector<LengthResult>& results);

// status "completed": train and eval seconds, steps/s, the final and last-step losses, and
// mean_<metric>_within_l_train / _beyond_l_train where the range has lengths.
void add_completed_entries(nlohmann::ordered_json& manifest, const TrainOutcome& outcome,
                           const Headline& headline, double eval_seconds);

// status "diverged": the step, and the error with its advice.
void add_diverged_entries(nlohmann::ordered_json& manifest, const TrainOutcome& outcome);

}  // namespace lenlab
