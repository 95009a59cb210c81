#include "train/until_fit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace lenlab {

void check_until_fit(const UntilFitSettings& s, int validate, TaskKind task) {
  if (s.on != 0 && s.on != 1)
    throw UsageError(fmt::format("--until-fit (until_fit) must be 0 or 1, got {}", s.on));
  if (validate != 0 && validate != 1)
    throw UsageError(fmt::format("--validate (validate) must be 0 or 1, got {}", validate));
  if (s.every < 1)
    throw UsageError(fmt::format(
        "--fit-every (fit_every) must be >= 1 (training steps between two checks), got {}",
        s.every));
  if (s.patience < 0)
    throw UsageError(fmt::format(
        "--fit-patience (fit_patience) must be >= 0 (checks without a better score before "
        "stopping; 0: stop only when the range is learned), got {}",
        s.patience));
  if (s.samples < 1)
    throw UsageError(fmt::format(
        "--fit-samples (fit_samples) must be >= 1 (validation sequences per length), got {}",
        s.samples));
  const UntilFitSettings defaults;
  if (s.on == 0 && (s.every != defaults.every || s.patience != defaults.patience))
    throw UsageError(
        "--fit-every and --fit-patience set the stop rule of --until-fit (until_fit): give "
        "--until-fit, or leave them at their defaults");
  if (s.on == 0 && validate == 0 && s.samples != defaults.samples)
    throw UsageError(
        "--fit-samples sets the validation sequences of --until-fit or --validate: give one of "
        "them, or leave it at its default");
  if ((s.on == 1 || validate == 1) && task == TaskKind::kText)
    throw UsageError(fmt::format(
        "{}: task 'text' has no in-range rule (real text has no known floor, so no score says "
        "its range is learned){}",
        s.on == 1 ? "--until-fit" : "--validate", s.on == 1 ? "; train it for --steps" : ""));
}

uint64_t validation_seed(uint64_t eval_seed) {
  // A stream no test length uses (lengths are at most kMaxLength), then one draw of it: the
  // validation set's streams stream(seed', l) are unrelated to the test's stream(eval_seed, l).
  return Rng::stream(eval_seed, std::numeric_limits<uint32_t>::max()).next_u64();
}

FitWatch::FitWatch(const UntilFitSettings& settings, double threshold, bool at_least)
    : settings_(settings), threshold_(threshold), at_least_(at_least) {}

bool FitWatch::fits(double value) const {
  return at_least_ ? value >= threshold_ : value <= threshold_;  // false for NaN
}

bool FitWatch::better(double value, double than) const {
  return at_least_ ? value > than : value < than;  // false for NaN
}

bool FitWatch::observe(int step, double value) {
  if (stopped()) return true;
  checks_.push_back({step, value});
  if (fits(value)) {
    reason_ = "fit";
    return true;
  }
  if (!std::isnan(value) && (!has_best_ || better(value, best_))) {
    best_ = value;
    has_best_ = true;
    since_best_ = 0;
  } else {
    ++since_best_;
  }
  if (settings_.patience > 0 && since_best_ >= settings_.patience) reason_ = "stalled";
  return stopped();
}

nlohmann::ordered_json FitWatch::to_json(const std::string& rule_text, int steps_trained) const {
  nlohmann::ordered_json j;
  j["rule"] = rule_text;
  j["every"] = settings_.every;
  j["patience"] = settings_.patience;
  j["samples"] = settings_.samples;
  j["reason"] = stopped() ? reason_ : "steps";
  j["stopped_step"] = stopped() ? checks_.back().step : 0;
  j["steps_trained"] = steps_trained;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array(),
                         values = nlohmann::ordered_json::array();
  for (const FitCheck& c : checks_) {
    steps.push_back(c.step);
    // JSON has no NaN: a check whose score was not a number is written as null.
    values.push_back(std::isnan(c.value) ? nlohmann::ordered_json()
                                         : nlohmann::ordered_json(c.value));
  }
  j["check_steps"] = std::move(steps);
  j["check_values"] = std::move(values);
  return j;
}

}  // namespace lenlab
