#pragma once
// What a figure can draw (FigureSpec::plot and ::metric), by the names configs use, and how each
// metric is read from a test result. lab/ checks a config's choices against these lists; plots/
// and the report read the numbers and the axis text from here, so the names cannot drift apart.
#include <string>
#include <vector>

#include "tasks/task.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

// "length", "depth" (passkey), "position" (markov), "misalignment" (the tasks with the metric:
// the scalar tasks and markov), "temperature" (every task, lines with an auto temperature: the
// metric against the search's grid τ at each length past l_train).
std::vector<std::string> plot_kinds();
// "mse", "token_accuracy", "exact_match", "generated_token_accuracy", "generated_exact_match",
// "cross_entropy", "excess_ce", "perplexity" (exp of the cross-entropy), "bits_per_char" (the
// cross-entropy in bits), "attention_entropy", "attention_max_prob".
std::vector<std::string> metric_names();
// The metrics a "position" plot can draw: token_accuracy, cross_entropy, excess_ce, perplexity,
// bits_per_char (each as the task has it).
std::vector<std::string> position_metrics();
// The attention statistics (runs with attention_stats = 1; train/attention_stats.hpp): the mean
// attention entropy or largest attention probability over every layer, head and query row, the
// quantity paper 002's temperature search aligns (mean_statistic).
bool is_attention_metric(const std::string& metric);
// The scores of the answer the model writes (runs with decode = "greedy"; train/greedy_decode.hpp):
// generated_token_accuracy, generated_exact_match, for the token tasks with a prompt.
bool is_generated_metric(const std::string& metric);
// The metrics a task has: mse for the scalar tasks; the token metrics for the token tasks
// (the generated ones for those with a prompt; excess_ce for markov only; perplexity and
// bits_per_char for text only); the attention statistics for every task.
std::vector<std::string> task_metrics(TaskKind task);
// What a figure draws when its config names no metric: mse (scalar tasks), excess_ce (markov),
// perplexity (text), token_accuracy (every other token task).
std::string default_metric(TaskKind task);

// A fraction in [0, 1] where higher is better (token_accuracy, exact_match, the generated ones).
bool metric_is_fraction(const std::string& metric);
// A loss with no level that means success (cross_entropy, perplexity, bits_per_char): lower is
// better, but no line is said to generalize by a threshold.
bool metric_is_raw_loss(const std::string& metric);
// The y-axis (or colour-box) text, e.g. "token accuracy" or "excess cross-entropy (nats)".
std::string metric_label(const std::string& metric);

// The metric's value in one result row (a length, or a passkey (length, depth) cell); an attention
// metric of a row without statistics is NaN (the curve skips it). A metric a
// row does not carry (mse of a token row, a token metric of a scalar row) is a
// std::invalid_argument: configs are checked before any result is read.
double metric_value(const LengthResult& row, const std::string& metric);
// A position_metrics() metric at one position (std::invalid_argument for another).
double position_metric_value(const PositionResult& p, const std::string& metric);

}  // namespace lenlab
