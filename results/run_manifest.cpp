#include "results/run_manifest.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace lenlab {

namespace {

void add_training_seconds(nlohmann::ordered_json& m, const TrainOutcome& outcome) {
  m["train_seconds"] = outcome.seconds;
  m["steps_per_second"] = outcome.log.size() / std::max(outcome.seconds, 1e-9);
}

}  // namespace

Headline headline_of(const TrainSpec& spec, const std::vector<LengthResult>& results) {
  const bool token = !results.empty() && results.front().token;
  const bool markov = spec.task == "markov", text = spec.task == "text";
  Headline h;
  h.metric = !token ? "test_mse" : markov ? "excess_ce" : text ? "cross_entropy" : "token_accuracy";
  std::vector<int> lengths;
  std::vector<double> values;
  for (const LengthResult& r : results) {
    lengths.push_back(r.length);
    values.push_back(!token   ? r.mse
                     : markov ? r.excess_ce
                     : text   ? r.cross_entropy
                              : r.token_accuracy);
  }
  h.means = range_means(lengths, values, spec.l_train);
  return h;
}

void add_completed_entries(nlohmann::ordered_json& m, const TrainOutcome& outcome,
                           const Headline& headline, double eval_seconds) {
  add_training_seconds(m, outcome);
  m["status"] = "completed";
  m["final_train_loss"] = outcome.final_loss();
  m["last_step_loss"] = outcome.log.back().loss;
  m["eval_seconds"] = eval_seconds;
  const RangeMeans& means = headline.means;
  if (means.n_within > 0)
    m["mean_" + headline.metric + "_within_l_train"] = means.within_sum / means.n_within;
  if (means.n_beyond > 0)
    m["mean_" + headline.metric + "_beyond_l_train"] = means.beyond_sum / means.n_beyond;
}

void add_diverged_entries(nlohmann::ordered_json& m, const TrainOutcome& outcome) {
  add_training_seconds(m, outcome);
  m["status"] = "diverged";
  m["diverged_at_step"] = outcome.diverged_step;
  m["error"] = !outcome.diverged_reason.empty()
                   ? outcome.diverged_reason
                   : fmt::format(
                         "the training loss or gradient became non-finite at step {}; try a "
                         "smaller --lr or a reparam with a narrower target range",
                         outcome.diverged_step);
}

}  // namespace lenlab
