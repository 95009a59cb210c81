#include "results/figure_metric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/temperature_search.hpp"

namespace lenlab {

std::vector<std::string> plot_kinds() {
  return {"length", "depth", "position", "misalignment", "temperature"};
}

std::vector<std::string> metric_names() {
  return {"mse",
          "token_accuracy",
          "exact_match",
          "generated_token_accuracy",
          "generated_exact_match",
          "cross_entropy",
          "excess_ce",
          "perplexity",
          "bits_per_char",
          "attention_entropy",
          "attention_max_prob"};
}

std::vector<std::string> position_metrics() {
  return {"token_accuracy", "cross_entropy", "excess_ce", "perplexity", "bits_per_char"};
}

bool is_attention_metric(const std::string& metric) {
  return metric == "attention_entropy" || metric == "attention_max_prob";
}

bool is_generated_metric(const std::string& metric) {
  return metric == "generated_token_accuracy" || metric == "generated_exact_match";
}

std::vector<std::string> task_metrics(TaskKind task) {
  // The family's metrics, then the task's own (its row's extra_metrics, comma-separated).
  std::vector<std::string> out = {"mse"};
  if (is_token_task(task)) out = {"token_accuracy", "exact_match", "cross_entropy"};
  if (is_token_task(task) && !task_every_row_answers(task))  // an answer to write
    out.insert(out.end(), {"generated_token_accuracy", "generated_exact_match"});
  std::string extra = task_info(task).extra_metrics;
  for (size_t at = 0; at < extra.size();) {
    const size_t comma = std::min(extra.find(',', at), extra.size());
    out.push_back(extra.substr(at, comma - at));
    at = comma + 1;
  }
  out.insert(out.end(), {"attention_entropy", "attention_max_prob"});  // every task's attention
  return out;
}

std::string default_metric(TaskKind task) {
  return task_info(task).metric;
}

bool metric_is_raw_loss(const std::string& metric) {
  return metric == "cross_entropy" || metric == "perplexity" || metric == "bits_per_char";
}

bool metric_is_fraction(const std::string& metric) {
  return metric == "token_accuracy" || metric == "exact_match" || is_generated_metric(metric);
}

std::string metric_label(const std::string& metric) {
  if (metric == "mse") return "test MSE";
  if (metric == "token_accuracy") return "token accuracy";
  if (metric == "exact_match") return "exact match (fraction of sequences)";
  if (metric == "generated_token_accuracy") return "token accuracy, greedy decoding";
  if (metric == "generated_exact_match")
    return "exact match, greedy decoding (fraction of sequences)";
  if (metric == "cross_entropy") return "cross-entropy (nats)";
  if (metric == "excess_ce") return "excess cross-entropy (nats)";
  if (metric == "perplexity") return "perplexity (per character)";
  if (metric == "bits_per_char") return "bits per character";
  if (metric == "attention_entropy") return "mean attention entropy (nats)";
  if (metric == "attention_max_prob") return "mean largest attention probability";
  throw std::invalid_argument("metric_label: unknown metric '" + metric + "'");
}

double metric_value(const LengthResult& row, const std::string& metric) {
  if (is_attention_metric(metric))  // NaN for a row without statistics: no point there
    return row.attention.empty()
               ? std::numeric_limits<double>::quiet_NaN()
               : mean_statistic(row.attention, metric == "attention_entropy" ? AlignBy::kEntropy
                                                                             : AlignBy::kMaxProb);
  if (metric == "mse" && !row.token) return row.mse;
  if (row.token) {
    if (metric == "token_accuracy") return row.token_accuracy;
    if (metric == "exact_match") return row.exact_match;
    if (metric == "generated_token_accuracy") return row.generated_token_accuracy;
    if (metric == "generated_exact_match") return row.generated_exact_match;
    if (metric == "cross_entropy") return row.cross_entropy;
    if (metric == "excess_ce") return row.excess_ce;
    if (metric == "perplexity") return std::exp(row.cross_entropy);
    if (metric == "bits_per_char") return row.cross_entropy / std::log(2.0);
  }
  throw std::invalid_argument("metric_value: a " + std::string(row.token ? "token" : "scalar") +
                              " result has no metric '" + metric + "'");
}

double position_metric_value(const PositionResult& p, const std::string& metric) {
  if (metric == "token_accuracy") return p.token_accuracy;
  if (metric == "cross_entropy") return p.cross_entropy;
  if (metric == "excess_ce") return p.excess();
  if (metric == "perplexity") return std::exp(p.cross_entropy);
  if (metric == "bits_per_char") return p.cross_entropy / std::log(2.0);
  throw std::invalid_argument("position_metric_value: no metric '" + metric + "' per position");
}

}  // namespace lenlab
