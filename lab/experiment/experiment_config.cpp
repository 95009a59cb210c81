#include "lab/experiment/experiment_config.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <climits>
#include <iterator>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/text_file.hpp"
#include "core/text_rule.hpp"
#include "lab/experiment/figure_rules.hpp"
#include "lab/experiment/toml_guard.hpp"
#include "results/figure_metric.hpp"
#include "train/inference_attention.hpp"
#include "train/lengths.hpp"

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

// `seeds_until_decided` at the top level: 0 when absent, else an integer from 1 to
// kMaxSeedsUntilDecided.
int seeds_until_decided_of(const toml::table& root, const std::string& source) {
  const toml::node* node = root.get("seeds_until_decided");
  if (!node) return 0;
  const std::optional<int64_t> v =
      node->is_integer() ? node->value<int64_t>() : std::optional<int64_t>{};
  if (!v || *v < 1 || *v > kMaxSeedsUntilDecided)
    throw UsageError(fmt::format(
        "{}:{}: 'seeds_until_decided' must be an integer from 1 to {} (the most seeds a compared "
        "figure's lines may run while its verdict is undecided)",
        source, node->source().begin.line, kMaxSeedsUntilDecided));
  return static_cast<int>(*v);
}

// The settings a [select] grid may try: how a model is trained, not what it is or how it is tested.
const std::vector<std::string> kGridKeys = {
    "lr",    "warmup_steps", "weight_decay", "min_lr_ratio", "clip_norm",
    "beta1", "beta2",        "adam_eps",     "batch_size",   "steps"};

// [select]: by = "validation" (the only way: a test length never chooses) and, per setting of
// kGridKeys, a non-empty list of its values. Every combination is applied to [defaults] now, so a
// wrong type fails at load time.
SettingGrid grid_of(const toml::table& root, const TrainSpec& defaults, const std::string& source) {
  SettingGrid grid;
  const toml::node* node = root.get("select");
  if (!node) return grid;
  const toml::table* t = node->as_table();
  if (!t) throw UsageError(fmt::format("{}: 'select' must be a table", where(source, *node, "")));
  const toml::node* by = t->get("by");
  if (!by || !by->as_string() || by->as_string()->get() != "validation")
    throw UsageError(fmt::format(
        "{}: [select] needs by = \"validation\": each line and seed keeps the combination whose "
        "model scores best on validation sequences inside its training range (a test length "
        "never chooses)",
        where(source, by ? *by : *node, "select")));
  for (const auto& [key, value] : *t) {
    const std::string k(key.str());
    if (k == "by") continue;
    if (std::find(kGridKeys.begin(), kGridKeys.end(), k) == kGridKeys.end())
      throw UsageError(fmt::format("{}: [select] cannot try '{}'; valid settings: {}",
                                   where(source, value, "select"), k, join_choices(kGridKeys)));
    const toml::array* values = value.as_array();
    if (!values || values->empty())
      throw UsageError(
          fmt::format("{}: [select] {} must be a non-empty list of values, e.g. "
                      "lr = [1e-4, 3e-4, 5e-4]",
                      where(source, value, "select"), k));
    grid.keys.push_back(k);
    grid.values.emplace_back();
    for (const toml::node& v : *values) {
      Json one = Json::object();
      one[k] = scalar_to_json(v);
      spec_from_json(one, defaults, where(source, v, "select"));
      grid.values.back().push_back(one[k]);
    }
  }
  if (grid.empty())
    throw UsageError(
        fmt::format("{}: [select] lists no setting to try; add one, e.g. lr = [1e-4, 3e-4, 5e-4]",
                    where(source, *node, "select")));
  return grid;
}

// A figure under a [select] grid must leave the grid's settings to it.
void check_grid_free(const FigureSpec& fig, const toml::table& t, const SettingGrid& grid,
                     const std::string& source, const std::string& at) {
  for (const std::string& k : grid.keys) {
    bool set = t.contains(k) || fig.vary == k;
    if (fig.vary == kVarySettings)
      for (const Json& line : fig.values) set = set || line.contains(k);
    if (set)
      throw UsageError(fmt::format(
          "{}: '{}' is tried by [select] for every run; a figure or line cannot also set it "
          "(drop it here, or from [select])",
          where(source, t, at), k));
  }
}

// The text parsed as TOML, a syntax error named with its line.
toml::table parse_toml(const std::string& text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: {}", source, e.source().begin.line, e.description()));
  }
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
  toml::table root = parse_toml(text, source);
  ExperimentConfig config;
  const std::vector<std::string> top_level = {"seeds", "seeds_until_decided", "defaults", "select",
                                              "figures"};
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (std::find(top_level.begin(), top_level.end(), k) == top_level.end())
      throw UsageError(fmt::format("{}:{}: unknown key '{}'; valid top-level keys: {}", source,
                                   node.source().begin.line, k, join_choices(top_level)));
  }
  config.seeds = seed_list(root.get("seeds"), source, "");
  seeds_until_decided_of(root, source);  // checked now; read by config_seeds_until_decided

  TrainSpec defaults;
  if (const toml::node_view<toml::node> d = root["defaults"]; d) {
    if (!d.is_table()) throw UsageError(fmt::format("{}: 'defaults' must be a table", source));
    defaults = settings_from_table(*d.as_table(), defaults, {}, source, "defaults");
  }
  const SettingGrid grid = grid_of(root, defaults, source);

  std::set<std::string> pooling;  // figures with a `pool`: resolved once every figure is read
  const toml::table* figures = root["figures"].as_table();
  if (!figures || figures->empty())
    throw UsageError(fmt::format("{}: no [figures.NAME] tables", source));
  for (const auto& [key, node] : *figures) {
    const std::string name(key.str());
    const std::string at = "figures." + name;
    const toml::table* t = node.as_table();
    if (!t) throw UsageError(fmt::format("{}: '{}' must be a table", source, at));
    // The name becomes fig<NAME>.csv/.png and the title gnuplot's: checked now, not at writing.
    check_text(fmt::format("{}: the figure name", where(source, node, "figures")), name,
               TextKind::kName);
    FigureSpec fig;
    fig.name = name;
    fig.title = t->get_as<std::string>("title") ? t->get_as<std::string>("title")->get() : name;
    check_text(fmt::format("{}: the title", where(source, *t, at)), fig.title);
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
    if (!grid.empty()) {
      check_grid_free(fig, *t, grid, source, at);
      fig.grid = grid;
    }
    if (!pools) {  // a pooling figure's plot and metric are checked with its pooled lines
      resolve_plot_and_metric(fig, *t, source, at);
      resolve_at_length(fig, *t, source, at);
      resolve_baseline(fig, *t, source, at);
    }
    config.figures.push_back(std::move(fig));
  }
  if (!grid.empty())  // a fine-tune's parent is one run of a line, not a choice among several
    for (const FigureSpec& f : config.figures)
      for (size_t i = 0; i < f.values.size(); ++i)
        if (f.line_spec(i, 0).init_from.rfind("figure:", 0) == 0)
          throw UsageError(fmt::format(
              "{}: figure {} fine-tunes another figure (init_from = \"figure:...\"), which a "
              "[select] grid cannot: its parent would be one of several runs",
              source, f.name));
  for (const std::string& name : pooling) resolve_pool(config, name, *figures, pooling, source);
  std::sort(config.figures.begin(), config.figures.end(),
            [](const FigureSpec& a, const FigureSpec& b) { return a.name < b.name; });
  return config;
}

int config_seeds_until_decided(const std::string& text, const std::string& source) {
  check_ascii_outside_strings(text, source);
  return seeds_until_decided_of(parse_toml(text, source), source);
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

}  // namespace lenlab
