#pragma once
// A trained model's evaluation with its test-time attention (train/inference_attention.hpp): the
// one place `lenlab eval` and a run's own evaluation (lab/run/run_group_impl.hpp) set it up, so
// that both evaluate a Λ-mask, a cap or a temperature the same way.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "train/evaluate.hpp"
#include "train/inference_attention.hpp"

namespace lenlab {

// Evaluates one job on the trained model (on whatever backend holds it).
using EvaluateJob = std::function<std::vector<LengthResult>(const EvalJob&)>;

// One point of the search's curve: at a test length and a grid temperature, the mean attention
// statistics (over layers, heads, rows) and the task's metrics (results/figure_metric.hpp's
// names: mse for the scalar tasks; token_accuracy, exact_match, cross_entropy and, markov,
// excess_ce for the token tasks; passkey: the mean over its depth cells), measured on the
// search's kTemperatureSearchSamples sequences.
struct TemperatureCurvePoint {
  int length = 0;
  double tau = 1;
  double max_prob = 0, entropy = 0;
  std::map<std::string, double> metrics;
};

// The temperatures chosen at each test length past l_train.
struct TemperatureChoice {
  std::vector<double> grid;        // the search's grid (search_grid), 1 first
  std::map<int, double> searched;  // paper 002's Algorithm 1 (the one evaluated)
  // Where searched sits at the grid's bound: "low" or "high" (grid_bound); lengths not at one are
  // absent.
  std::map<int, std::string> at_bound;
  // Algorithm 1 by each statistic (searched is one of them), from the same curve.
  std::map<int, double> pmax_search, entropy_search;
  // Its Propositions 1 and 2 (train/temperature_search.hpp) from layer 0's logits, as the paper
  // computes them: σ = √(the mean over heads of the row variance of the logits), P = the mean
  // over heads of the largest probability at l_train, L = the tokens of a sequence. NaN: none.
  std::map<int, double> pmax_closed_form, entropy_closed_form;
  std::map<int, double> log_rule;  // log L_train / log L (temperature_log_rule)
  // Every (length, grid τ) the search measured, length-major, τ descending.
  std::vector<TemperatureCurvePoint> curve;
};

// Paper 002's Algorithm 1 at every length of `base` past l_train: the grid's temperature whose
// mean attention statistic (over layers, heads and query rows) is nearest the model's at l_train
// with τ = 1, measured on the first kTemperatureSearchSamples test sequences of each length (the
// same for every τ); and, from the same sequences at τ = 1, the closed forms.
// The search measures every grid τ at every length (no early stop), so the whole curve of the
// task's metric against τ comes with it at no extra cost.
TemperatureChoice search_temperatures(AlignBy by, const std::vector<double>& grid,
                                      const EvalJob& base, int l_train, const EvaluateJob& run);

// Sets job.attention from spec.test_attention (UsageError as test_time_attention says), and
// job.attention_stats when it asks for the statistics. From the trained model (`config`, its
// whole parameter vector `params`): job.untrained_distances (models/position_bias.hpp), and
// `--distance-cap trained` resolved on them (train/untrained_bias.hpp). With an
// auto temperature, searches it per length past spec.l_train through `run` and sets
// job.attention.logit_scale_by_length (indexed by a sequence's tokens); returns the temperatures
// per length (empty without an auto temperature). Statistics asked for also measure the logits
// (EvalJob::attention_logits). A job without lengths (a diverged run) gets the attention alone.
TemperatureChoice prepare_test_time_eval(EvalJob& job, const TrainSpec& spec,
                                         const ModelConfig& config,
                                         const std::vector<double>& params, const EvaluateJob& run);

// The closed forms as JSON for a manifest or eval.json ("temperature_closed_form"):
// {"proposition_1_pmax": {length: τ}, "proposition_2_entropy": {...}} (null: no solution).
nlohmann::ordered_json closed_form_json(const TemperatureChoice& t);
// The rest of the search for a manifest or eval.json ("temperature_search"): {"grid": [τ…],
// "at_bound": {length: "low"|"high"}, "chosen": {"auto-pmax": {length: τ}, "auto-entropy": …,
// "log_rule": …}, "curve": [{"length", "tau", "attention_max_prob", "attention_entropy",
// metric: value…}…]} (null: no value).
nlohmann::ordered_json temperature_search_json(const TemperatureChoice& t);
// All of it, into a manifest (at its top level) or eval.json (under "attention"):
// "temperature_by_length" {length: τ}, then "temperature_closed_form" and "temperature_search";
// nothing when no temperature was searched.
void add_temperature_json(nlohmann::ordered_json& into, const TemperatureChoice& t);

}  // namespace lenlab
