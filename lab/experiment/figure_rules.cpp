#include "lab/experiment/figure_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/text_rule.hpp"
#include "results/figure_metric.hpp"
#include "tasks/token_tasks.hpp"
#include "train/inference_attention.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace {

using Json = nlohmann::ordered_json;

// The plots a task's lines can have (its row says which apply): "length" and "temperature" always;
// "depth" for a task tested at depths (passkey); "position" where every row answers (markov,
// text); "misalignment" where the measure applies (markov and the scalar tasks).
std::vector<std::string> task_plots(TaskKind task) {
  std::vector<std::string> plots = {"length"};
  if (task_has_depths(task)) plots.push_back("depth");
  if (task_every_row_answers(task)) plots.push_back("position");
  if (task_info(task).misalignment) plots.push_back("misalignment");
  plots.push_back("temperature");
  return plots;
}

bool contains(const std::vector<std::string>& choices, const std::string& x) {
  return std::find(choices.begin(), choices.end(), x) != choices.end();
}

// How an error names line i: "line pe = rope", or "pooled line 'vcl: 4' (from 'pool')".
std::string line_name(const FigureSpec& fig, size_t i) {
  return fig.is_pooled(i) ? fmt::format("pooled line '{}' (from 'pool')", fig.line_label(i))
                          : fmt::format("line {} = {}", fig.vary, fig.line_label(i));
}

}  // namespace

std::string where(const std::string& source, const toml::node& node, const std::string& table) {
  return fmt::format("{}:{} [{}]", source, node.source().begin.line, table);
}

void resolve_plot_and_metric(FigureSpec& fig, const toml::table& t, const std::string& source,
                             const std::string& at) {
  // The key's text, and where to point at: the key's line, or the table's when it is absent.
  const auto read = [&](const char* key, const std::vector<std::string>& choices,
                        std::string* out) {
    const toml::node* node = t.get(key);
    if (!node) return where(source, t, at);
    const std::string here = where(source, *node, at);
    const auto* text = node->as_string();
    if (!text)
      throw UsageError(
          fmt::format("{}: '{}' must be a string: {}", here, key, join_choices(choices)));
    *out = text->get();
    if (!contains(choices, *out))
      throw UsageError(fmt::format("{}: unknown {} '{}'; valid {}s: {}", here, key, *out, key,
                                   join_choices(choices)));
    return here;
  };
  const std::string plot_at = read("plot", plot_kinds(), &fig.plot);
  std::string metric;  // empty: not given
  const std::string metric_at = read("metric", metric_names(), &metric);
  if (fig.plot == "position" && !metric.empty() && !contains(position_metrics(), metric))
    throw UsageError(fmt::format(
        "{}: metric '{}' with plot 'position': a position plot draws one of {} per position",
        metric_at, metric, join_choices(position_metrics())));

  std::string default_of_all;  // the lines' shared default metric
  for (size_t i = 0; i < fig.n_lines(); ++i) {
    const std::string line = line_name(fig, i);
    const std::string task_name = fig.line_spec(i, 0).task;
    TaskKind task;
    try {
      task = parse_task(task_name);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}: {}", where(source, t, at), line, e.what()));
    }
    if (!contains(task_plots(task), fig.plot))
      throw UsageError(fmt::format(
          "{}: plot '{}' is for {} only, but {} trains task '{}'; valid "
          "plots for {}: {}",
          plot_at, fig.plot,
          fig.plot == "depth"          ? "passkey"
          : fig.plot == "misalignment" ? "the tasks with a misalignment metric (mean, length, "
                                         "sum, markov)"
                                       : "markov and text",
          line, task_name, task_name, join_choices(task_plots(task))));
    if (!metric.empty() && !contains(task_metrics(task), metric))
      throw UsageError(fmt::format(
          "{}: metric '{}' is not one of task '{}' ({}); valid metrics for {}: {}", metric_at,
          metric, task_name, line, task_name, join_choices(task_metrics(task))));
    const std::string own = default_metric(task);
    if (metric.empty() && i > 0 && own != default_of_all)
      throw UsageError(
          fmt::format("{}: the lines have different default metrics ({}: {}, {}: {}); set "
                      "'metric' to one that all their tasks have",
                      where(source, t, at), line_name(fig, 0), default_of_all, line, own));
    default_of_all = own;
  }
  fig.metric = metric.empty() ? default_of_all : metric;
  if (fig.plot == "temperature") {
    // The curve is the search's: its points carry the attention statistics too.
    for (size_t i = 0; i < fig.n_lines(); ++i)
      if (!temperature_alignment(fig.line_spec(i, 0).test_attention))
        throw UsageError(fmt::format(
            "{}: plot 'temperature' draws the temperature search's curve, but {} has temperature "
            "'{}'; set temperature = \"auto-pmax\" or \"auto-entropy\" in the figure (or its "
            "lines)",
            plot_at, line_name(fig, i), fig.line_spec(i, 0).test_attention.temperature));
    return;
  }
  if (is_generated_metric(fig.metric))
    for (size_t i = 0; i < fig.n_lines(); ++i)
      if (fig.line_spec(i, 0).test_attention.decode != "greedy")
        throw UsageError(fmt::format(
            "{}: metric '{}' scores the answer the model writes, but {} does not decode it; set "
            "decode = \"greedy\" in the figure (or its lines)",
            metric_at, fig.metric, line_name(fig, i)));
  if (!is_attention_metric(fig.metric)) return;
  if (fig.plot != "length")
    throw UsageError(fmt::format(
        "{}: metric '{}' is drawn against test length only; set plot = \"length\" or leave it out",
        metric_at, fig.metric));
  for (size_t i = 0; i < fig.n_lines(); ++i)
    if (fig.line_spec(i, 0).test_attention.attention_stats != 1)
      throw UsageError(fmt::format(
          "{}: metric '{}' needs the attention statistics, but {} does not measure them; set "
          "attention_stats = 1 in the figure (or its lines)",
          metric_at, fig.metric, line_name(fig, i)));
}

void resolve_at_length(FigureSpec& fig, const toml::table& t, const std::string& source,
                       const std::string& at) {
  const toml::node* node = t.get("at_length");
  const std::string here = node ? where(source, *node, at) : where(source, t, at);
  if (fig.plot != "misalignment") {
    if (node)
      throw UsageError(fmt::format(
          "{}: 'at_length' is for plot = \"misalignment\" only (the test length of each run's "
          "y); this figure's plot is '{}'",
          here, fig.plot));
    return;
  }
  std::vector<std::vector<int>> lengths;
  std::vector<int> common;  // the lengths every line tests
  for (size_t i = 0; i < fig.n_lines(); ++i) {
    lengths.push_back(test_lengths(fig.line_spec(i, 0)));
    if (i == 0) {
      common = lengths[0];
      continue;
    }
    std::vector<int> both;
    std::set_intersection(common.begin(), common.end(), lengths[i].begin(), lengths[i].end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  if (node) {
    // is_integer first: value<int64_t>() would convert a float.
    const std::optional<int64_t> v =
        node->is_integer() ? node->value<int64_t>() : std::optional<int64_t>{};
    if (!v || *v < 1 || *v > INT_MAX)
      throw UsageError(fmt::format(
          "{}: 'at_length' must be a test length of every line, an integer >= 1{}", here,
          common.empty() ? "" : fmt::format(" (the longest they share: {})", common.back())));
    fig.at_length = static_cast<int>(*v);
  } else {
    for (const std::vector<int>& l : lengths) fig.at_length = std::max(fig.at_length, l.back());
  }
  for (size_t i = 0; i < fig.n_lines(); ++i)
    if (!std::binary_search(lengths[i].begin(), lengths[i].end(), fig.at_length))
      throw UsageError(fmt::format(
          "{}: {} {} is not a test length of {} (it tests {}); {}", here,
          node ? "'at_length'" : "'at_length' (by default the lines' longest test length)",
          fig.at_length, line_name(fig, i), format_lengths(lengths[i]),
          common.empty() ? "no length is tested by every line"
                         : fmt::format("set at_length to one every line tests (the longest: {})",
                                       common.back())));
}

void resolve_baseline(FigureSpec& fig, const toml::table& t, const std::string& source,
                      const std::string& at) {
  const toml::node* node = t.get("baseline");
  if (!node) return;
  const std::string here = where(source, *node, at);
  std::vector<std::string> labels;
  for (size_t i = 0; i < fig.n_lines(); ++i) labels.push_back(fig.line_label(i));
  const auto* text = node->as_string();
  if (!text || !contains(labels, text->get()))
    throw UsageError(fmt::format(
        "{}: 'baseline' must name one of the figure's lines (the one the others are compared to "
        "in report.md); valid: {}",
        here, join_choices(labels)));
  if (fig.plot != "length" || is_attention_metric(fig.metric))
    throw UsageError(fmt::format(
        "{}: 'baseline' compares lines by their metric beyond l_train on a length plot of the "
        "MSE, accuracy, exact match or a cross-entropy; this figure has plot '{}', metric '{}'",
        here, fig.plot, fig.metric));
  fig.baseline = text->get();
}

void check_settings_lines(const FigureSpec& fig, const toml::array& values,
                          const std::string& source, const std::string& at) {
  std::set<std::string> labels;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string here = where(source, values[i], at);
    const Json& v = fig.values[i];
    if (!values[i].is_table())
      throw UsageError(fmt::format(
          "{}: with vary = \"settings\" each value is a table of settings with a label, e.g. "
          "{{ label = \"window\", n_local = \"train\" }}; value {} is not a table",
          here, i + 1));
    if (!v.contains("label") || !v["label"].is_string() || v["label"].get<std::string>().empty())
      throw UsageError(fmt::format(
          "{}: value {} of vary = \"settings\" needs a non-empty string 'label' (the line's name "
          "in the legend and the report)",
          here, i + 1));
    check_text(fmt::format("{}: the label of value {}", here, i + 1),
               v["label"].get<std::string>());
    if (!labels.insert(v["label"].get<std::string>()).second)
      throw UsageError(fmt::format("{}: two lines are labelled '{}'; give each its own label", here,
                                   v["label"].get<std::string>()));
  }
}

}  // namespace lenlab
