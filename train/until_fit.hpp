#pragma once
// Training until the range is learned (--until-fit): every `every` steps the model is scored on a
// validation set inside its training lengths, by its task's in-range rule
// (results/in_range_fit.hpp: token accuracy ≥ 0.99, excess cross-entropy ≤ 0.01 nats, MSE ≤ 1 % of
// the target's variance), and the run stops when that score meets the rule ("fit") or has not
// improved for `patience` checks ("stalled"); --steps stays the cap (and the learning-rate
// schedule's length, so a run that stops early stopped part-way through its schedule). The weights
// kept are the ones after the stopping step. Delétang et al. and Ruoss et al. train for a fixed
// number of steps; this rule is lenlab's, so that a run's in-range fit is a recorded fact of its
// training rather than an accident of its budget.
//
// The validation sequences are never the test's: they are drawn with their own seed
// (validation_seed, derived from --eval-seed), --fit-samples per length at every length of the
// training range (passkey: at each test depth). Lengths whose sequences number fewer than the
// samples are enumerated by both sets, as the test set enumerates them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace lenlab {

struct UntilFitSettings {
  int on = 0;         // --until-fit: 1 = stop when the range is learned or learning stalls
  int every = 200;    // --fit-every: training steps between two validation checks
  int patience = 10;  // --fit-patience: checks without a better score before stopping; 0: never
  int samples = 64;   // --fit-samples: validation sequences per in-range length
};

// UsageError naming the bad value: every/samples >= 1, patience >= 0, on and validate 0 or 1,
// settings changed without --until-fit (--fit-samples: or --validate), or a task without an
// in-range rule (text).
void check_until_fit(const UntilFitSettings& s, int validate, TaskKind task);

// The seed of the validation sequences: independent of every test length's stream of eval_seed.
uint64_t validation_seed(uint64_t eval_seed);

// One validation check: the step after which it was made and the in-range score.
struct FitCheck {
  int step = 0;
  double value = 0;
};

// The stop rule's state for one run, fed the in-range score at each check.
class FitWatch {
 public:
  // threshold and at_least: the rule (the score must be ≥ threshold when at_least, else ≤).
  FitWatch(const UntilFitSettings& settings, double threshold, bool at_least);
  // Records the score after `step`; returns whether the run stops now. A NaN score never fits
  // and never improves.
  bool observe(int step, double value);
  bool stopped() const { return !reason_.empty(); }
  // "fit", "stalled", or "" while training (and for a run that reached --steps).
  const std::string& reason() const { return reason_; }
  const std::vector<FitCheck>& checks() const { return checks_; }
  // The manifest's record: the rule's settings, every check, where and why the run stopped
  // (stopped_step 0 and reason "steps" when it ran every step).
  nlohmann::ordered_json to_json(const std::string& rule_text, int steps_trained) const;

 private:
  bool fits(double value) const;
  bool better(double value, double than) const;
  UntilFitSettings settings_;
  double threshold_;
  bool at_least_;
  std::vector<FitCheck> checks_;
  double best_ = 0;
  bool has_best_ = false;
  int since_best_ = 0;  // checks since the best score
  std::string reason_;
};

}  // namespace lenlab
