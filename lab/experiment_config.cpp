#include "lab/experiment_config.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <climits>
#include <iterator>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "lab/init_from.hpp"
#include "lab/toml_guard.hpp"
#include "results/figure_metric.hpp"
#include "train/lengths.hpp"
#include "train/test_time_attention.hpp"

namespace lenlab {

namespace {

using Json = nlohmann::ordered_json;

// A TOML scalar as JSON (the settings parser works on JSON); arrays and tables are refused by the
// type check that follows, with the key named.
Json scalar_to_json(const toml::node& node) {
  if (auto v = node.as_string()) return v->get();
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (node.is_array()) return Json::array();
  Json j = Json::object();  // a table, e.g. a line of vary = "settings"
  if (const toml::table* t = node.as_table())
    for (const auto& [key, value] : *t) j[std::string(key.str())] = scalar_to_json(value);
  return j;
}

std::string where(const std::string& source, const toml::node& node, const std::string& table) {
  return fmt::format("{}:{} [{}]", source, node.source().begin.line, table);
}

// The settings of a TOML table (skipping `skip` keys) applied on top of `base`.
TrainSpec settings_from_table(const toml::table& table, const TrainSpec& base,
                              const std::set<std::string>& skip, const std::string& source,
                              const std::string& name) {
  Json j = Json::object();
  for (const auto& [key, node] : table) {
    if (skip.count(std::string(key.str()))) continue;
    j[std::string(key.str())] = scalar_to_json(node);
  }
  return spec_from_json(j, base, where(source, table, name));
}

// The plots a task's lines can have: "length" and "temperature" always; "depth" for passkey;
// "position" for markov; "misalignment" for markov and the scalar tasks.
std::vector<std::string> task_plots(TaskKind task) {
  if (task == TaskKind::kPasskey) return {"length", "depth", "temperature"};
  if (task == TaskKind::kMarkov) return {"length", "position", "misalignment", "temperature"};
  if (is_token_task(task)) return {"length", "temperature"};
  return {"length", "misalignment", "temperature"};  // the scalar tasks
}

bool contains(const std::vector<std::string>& choices, const std::string& x) {
  return std::find(choices.begin(), choices.end(), x) != choices.end();
}

// How an error names line i: "line pe = rope", or "pooled line 'vcl: 4' (from 'pool')".
std::string line_name(const FigureSpec& fig, size_t i) {
  return fig.is_pooled(i) ? fmt::format("pooled line '{}' (from 'pool')", fig.line_label(i))
                          : fmt::format("line {} = {}", fig.vary, fig.line_label(i));
}

// A figure table's `plot` and `metric` (text, not run settings) into fig.plot and fig.metric,
// checked against the task of every line (its settings after `vary`), so that a figure that cannot
// be drawn fails at load time. An absent metric becomes the lines' default, which they must share.
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
  if (fig.plot == "position" && !metric.empty() && metric != "excess_ce")
    throw UsageError(fmt::format(
        "{}: metric '{}' with plot 'position': a position plot draws the excess cross-entropy "
        "per position; leave metric out or set it to 'excess_ce'",
        metric_at, metric));

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
                                       : "markov",
          line, task_name, task_name, join_choices(task_plots(task))));
    if (!metric.empty() && !contains(task_metrics(task), metric))
      throw UsageError(fmt::format(
          "{}: metric '{}' is not one of task '{}' ({}); valid metrics for {}: {}", metric_at,
          metric, task_name, line, task_name, join_choices(task_metrics(task))));
    const std::string own = fig.plot == "position" ? "excess_ce" : default_metric(task);
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

// A misalignment figure's `at_length` into fig.at_length: the key's length, or by default the
// longest test length of its lines. Every line must test it, so that every run has a y there.
// `at_length` on another plot is refused: it would silently mean nothing.
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

// `baseline` into fig.baseline: the label of one of the figure's lines, on a length plot of a
// success metric (the method comparison ranks lines by it; lab/comparison_report.hpp).
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

// vary = "settings": every value a table with a unique, non-empty string `label` (its settings are
// checked with the others, by line_spec).
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
    if (!labels.insert(v["label"].get<std::string>()).second)
      throw UsageError(fmt::format("{}: two lines are labelled '{}'; give each its own label", here,
                                   v["label"].get<std::string>()));
  }
}

// The keys of a figure table that are not run settings (they never change a run's id).
const std::set<std::string> kFigureKeys = {"title", "vary",      "values",   "plot", "metric",
                                           "pool",  "at_length", "baseline", "seeds"};

// `seeds` (top level, or a figure's own when `at` names it): a non-empty list of integers >= 0.
std::vector<uint64_t> seed_list(const toml::node* node, const std::string& source,
                                const std::string& at) {
  const std::string key = at.empty() ? "'seeds'" : at + ": 'seeds'";
  const toml::array* seeds = node ? node->as_array() : nullptr;
  if (!seeds || seeds->empty())
    throw UsageError(fmt::format("{}: {} must be a non-empty list of integers >= 0", source, key));
  std::vector<uint64_t> out;
  for (const toml::node& s : *seeds) {
    // is_integer first: value<int64_t>() of a float such as 1e19 converts it, out of range.
    const std::optional<int64_t> v = s.is_integer() ? s.value<int64_t>() : std::optional<int64_t>{};
    if (!v || *v < 0)
      throw UsageError(
          fmt::format("{}:{}: {} must hold integers >= 0", source, s.source().begin.line, key));
    out.push_back(static_cast<uint64_t>(*v));
  }
  return out;
}

// A figure with `pool = ["a", "b"]` (plot "misalignment" only): every line of the figures named,
// in order, after its own (a pooling figure may have no vary and values, and then no settings).
// A pooling figure cannot itself be pooled: a pool gathers lines, not other pools.
void resolve_pool(ExperimentConfig& config, const std::string& name, const toml::table& figures,
                  const std::set<std::string>& pooling, const std::string& source) {
  const std::string at = "figures." + name;
  const toml::table& t = *figures.get_as<toml::table>(name);
  const toml::node& pool_node = *t.get("pool");
  const std::string here = where(source, pool_node, at);
  const auto* plot = t.get_as<std::string>("plot");
  if (!plot || plot->get() != "misalignment")
    throw UsageError(fmt::format(
        "{}: 'pool' gathers runs for a misalignment figure; set plot = \"misalignment\"", here));
  const toml::array* pool = pool_node.as_array();
  if (!pool || pool->empty())
    throw UsageError(fmt::format("{}: 'pool' must be a non-empty list of figure names", here));
  FigureSpec* fig = nullptr;
  for (FigureSpec& f : config.figures)
    if (f.name == name) fig = &f;
  std::vector<std::string> valid;  // the figures that can be pooled
  for (const FigureSpec& f : config.figures)
    if (!pooling.count(f.name)) valid.push_back(f.name);
  std::set<std::string> named;
  for (const toml::node& n : *pool) {
    const auto* other = n.as_string();
    const FigureSpec* found = other ? config.find(other->get()) : nullptr;
    if (!found || pooling.count(found->name))
      throw UsageError(fmt::format(
          "{}: 'pool' names {}, which is {}; valid: {}", where(source, n, at),
          other ? "'" + other->get() + "'" : std::string("a value that is not a string"),
          found ? "itself a pooling figure" : "no figure of this config", join_choices(valid)));
    if (!named.insert(found->name).second)
      throw UsageError(
          fmt::format("{}: 'pool' names '{}' twice", where(source, n, at), found->name));
    fig->pooled.push_back(*found);
    for (size_t l = 0; l < found->n_lines(); ++l)
      fig->pooled_lines.emplace_back(fig->pooled.size() - 1, l);
  }
  resolve_plot_and_metric(*fig, t, source, at);
  resolve_at_length(*fig, t, source, at);
  resolve_baseline(*fig, t, source, at);
}

}  // namespace

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& source) {
  check_ascii_outside_strings(text, source);
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
  }
  ExperimentConfig config;
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k != "seeds" && k != "defaults" && k != "figures")
      throw UsageError(fmt::format("{}:{}: unknown key '{}'; valid top-level keys: {}", source,
                                   node.source().begin.line, k,
                                   join_choices({"seeds", "defaults", "figures"})));
  }
  config.seeds = seed_list(root.get("seeds"), source, "");

  TrainSpec defaults;
  if (const toml::node_view<toml::node> d = root["defaults"]; d) {
    if (!d.is_table()) throw UsageError(fmt::format("{}: 'defaults' must be a table", source));
    defaults = settings_from_table(*d.as_table(), defaults, {}, source, "defaults");
  }

  std::set<std::string> pooling;  // figures with a `pool`: resolved once every figure is read
  const toml::table* figures = root["figures"].as_table();
  if (!figures || figures->empty())
    throw UsageError(fmt::format("{}: no [figures.NAME] tables", source));
  for (const auto& [key, node] : *figures) {
    const std::string name(key.str());
    const std::string at = "figures." + name;
    const toml::table* t = node.as_table();
    if (!t) throw UsageError(fmt::format("{}: '{}' must be a table", source, at));
    FigureSpec fig;
    fig.name = name;
    fig.title = t->get_as<std::string>("title") ? t->get_as<std::string>("title")->get() : name;
    const bool pools = t->contains("pool");
    if (pools) pooling.insert(name);
    if (pools && !t->contains("vary") && !t->contains("values")) {
      // Only pooled lines: settings here would apply to no run, so they are refused.
      for (const auto& [k, n] : *t)
        if (!kFigureKeys.count(std::string(k.str())) || k.str() == "seeds")
          throw UsageError(fmt::format(
              "{}: '{}' in a figure with 'pool' and no 'vary': it has no lines of its own for "
              "settings to apply to; valid keys here: {}",
              where(source, n, at), k.str(),
              join_choices({"title", "plot", "metric", "pool", "at_length", "baseline"})));
      config.figures.push_back(std::move(fig));
      continue;
    }
    const auto* vary = t->get_as<std::string>("vary");
    const toml::array* values = (*t)["values"].as_array();
    if (!vary || !values || values->empty())
      throw UsageError(
          fmt::format("{}: [{}] needs 'vary' (a setting name) and a non-empty "
                      "'values' list, one value per line of the figure",
                      where(source, *t, at), at));
    fig.vary = vary->get();
    fig.base = settings_from_table(*t, defaults, kFigureKeys, source, at);
    if (const toml::node* own = t->get("seeds")) {
      if (fig.vary == "seed")
        throw UsageError(fmt::format(
            "{}: 'seeds' in a figure that varies the seed: its values are its seeds; drop one",
            where(source, *own, at)));
      fig.seeds = seed_list(own, source, at);
    }
    for (const toml::node& v : *values) fig.values.push_back(scalar_to_json(v));
    if (fig.vary == kVarySettings) check_settings_lines(fig, *values, source, at);
    // Apply every value once now, so a wrong key or type fails at load time, not mid-sweep.
    for (size_t i = 0; i < fig.values.size(); ++i) {
      Json j = Json::object();
      if (fig.vary == kVarySettings) {
        j = fig.values[i];
        j.erase("label");
      } else {
        j[fig.vary] = fig.values[i];
      }
      spec_from_json(j, fig.base, where(source, *t, at) + " values");
    }
    if (!pools) {  // a pooling figure's plot and metric are checked with its pooled lines
      resolve_plot_and_metric(fig, *t, source, at);
      resolve_at_length(fig, *t, source, at);
      resolve_baseline(fig, *t, source, at);
    }
    config.figures.push_back(std::move(fig));
  }
  for (const std::string& name : pooling) resolve_pool(config, name, *figures, pooling, source);
  std::sort(config.figures.begin(), config.figures.end(),
            [](const FigureSpec& a, const FigureSpec& b) { return a.name < b.name; });
  return config;
}

ExperimentConfig load_experiment_config(const std::string& path) {
  return parse_experiment_config(read_text_file(path), path);
}

void use_only_experiment_seeds(ExperimentConfig& config) {
  for (FigureSpec& f : config.figures) {
    f.seeds.clear();
    for (FigureSpec& pooled : f.pooled) pooled.seeds.clear();
  }
}

std::vector<std::string> select_figures(const ExperimentConfig& config,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> selected;
  auto add = [&](const std::string& name) {
    if (std::find(selected.begin(), selected.end(), name) == selected.end())
      selected.push_back(name);
  };
  for (const std::string& name : names) {
    if (config.find(name)) {
      add(name);
      continue;
    }
    bool group = false;
    for (const std::string& figure : config.figure_names())
      if (figure.rfind(name + "-", 0) == 0) {
        add(figure);
        group = true;
      }
    if (!group)
      throw UsageError(fmt::format(
          "--figures: unknown figure '{}' (nor a group: no figure is named '{}-…'); valid "
          "figures: {}",
          name, name, join_choices(config.figure_names())));
  }
  return selected;
}

namespace {

// Plans runs in order, each parent before its fine-tunes (PlannedRun::parent).
struct Planner {
  const ExperimentConfig& config;
  std::vector<PlannedRun> runs;
  std::set<std::string> seen;
  std::vector<std::string> chain;  // the figures whose lines wait for the parent being planned

  // Plans `spec` (of figure chain.back()) and its parents; returns its id.
  std::string add(TrainSpec spec) {
    std::string parent;
    if (spec.init_from.rfind(kInitFromFigure, 0) == 0) {
      const std::string name = spec.init_from.substr(std::string(kInitFromFigure).size());
      const FigureSpec* fig = config.find(name);
      if (!fig)
        throw UsageError(fmt::format("figure {}: init_from = \"{}\" names no figure; valid: {}",
                                     chain.back(), spec.init_from,
                                     join_choices(config.figure_names())));
      if (std::find(chain.begin(), chain.end(), name) != chain.end()) {
        std::string loop;
        for (const std::string& f : chain) loop += f + " → ";
        throw UsageError(fmt::format(
            "figure {}: its chain of fine-tunes (init_from) loops: {}{}; a run cannot start from "
            "its own weights",
            chain.front(), loop, name));
      }
      chain.push_back(name);
      parent = add(parent_line(*fig, spec));
      chain.pop_back();
      spec.init_parent = parent;
    } else if (!spec.init_from.empty()) {
      spec = with_parent_id(spec);  // a folder given by path: checked now
    }
    std::string id = run_id(spec);
    if (seen.insert(id).second) runs.push_back({id, std::move(spec), std::move(parent)});
    return id;
  }

  // The line of `fig` that `child` fine-tunes, with the child's seed: its only line, or the one
  // whose own settings the child shares.
  TrainSpec parent_line(const FigureSpec& fig, const TrainSpec& child) const {
    if (fig.n_lines() == 1) return fig.line_spec(0, child.seed);
    for (size_t line = 0; line < fig.n_lines(); ++line) {
      if (fig.is_pooled(line)) continue;
      nlohmann::ordered_json own = nlohmann::ordered_json::object();
      if (fig.vary == kVarySettings) {
        own = fig.values[line];
        own.erase("label");
      } else {
        own[fig.vary] = fig.values[line];
      }
      // The child shares the line's settings when applying them to it changes nothing.
      TrainSpec probe = spec_from_json(own, child, "figure " + fig.name);
      probe.seed = child.seed;
      if (canonical_spec_text(probe) == canonical_spec_text(child))
        return fig.line_spec(line, child.seed);
    }
    throw UsageError(fmt::format(
        "figure {}: init_from = \"figure:{}\", but no line of {} (varying {}) has this run's "
        "settings of it; vary the same setting over values {} has, or give {} one line",
        chain[chain.size() - 2], fig.name, fig.name, fig.vary, fig.name, fig.name));
  }
};

}  // namespace

std::vector<PlannedRun> plan_runs(const ExperimentConfig& config,
                                  const std::vector<std::string>& figures,
                                  const std::vector<uint64_t>& seeds) {
  for (const std::string& name : figures)
    if (!config.find(name))
      throw UsageError(fmt::format("unknown figure '{}'; valid figures: {}", name,
                                   join_choices(config.figure_names())));
  Planner planner{config, {}, {}, {}};
  for (const FigureSpec& fig : config.figures) {
    if (!figures.empty() && std::find(figures.begin(), figures.end(), fig.name) == figures.end())
      continue;
    for (size_t line = 0; line < fig.n_lines(); ++line)
      for (uint64_t seed : fig.line_seeds(line, seeds)) {
        planner.chain = {fig.name};
        planner.add(fig.line_spec(line, seed));
      }
  }
  return std::move(planner.runs);
}

}  // namespace lenlab
