#include "lab/serve/run_view.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lab/serve/page_settings.hpp"
#include "results/figure_metric.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;

namespace {

Json all_fields(TrainSpec spec) {
  Json j = Json::object();
  visit_spec_fields(spec, [&](const Setting& row, const auto& field) { j[row.key] = field; });
  return j;
}

}  // namespace

// Settings as clients see them: a path on the server (a kServerPath row) never, an offered corpus
// by its name; any other path is left out (a fine-tune's parent stays named by init_parent's id).
Json for_clients(Json settings, const std::map<std::string, std::string>& corpora) {
  const TrainSpec fields;
  visit_spec_fields(fields, [&](const Setting& row, const auto&) {
    if (!row.has(Setting::kServerPath) || !settings.contains(row.key)) return;
    const Json value = settings[row.key];
    if (value == "") return;  // the default
    settings.erase(row.key);
    for (const auto& [name, file] : corpora)
      if (!file.empty() && value == file) settings[row.key] = name;
  });
  return settings;
}

// The four choices every run makes, then each setting that differs from the page's defaults.
std::string run_label(const TrainSpec& s, const std::map<std::string, std::string>& corpora) {
  std::string label = fmt::format("{} · {} · {} · l_train {}", s.task, s.pe, s.reparam, s.l_train);
  const Json base = all_fields(page_base_spec()), mine = for_clients(all_fields(s), corpora);
  for (const auto& item : mine.items()) {
    const std::string& key = item.key();
    if (key == "task" || key == "pe" || key == "reparam" || key == "l_train") continue;
    if (item.value() != base.at(key))
      label += fmt::format(
          " · {} {}", key,
          item.value().is_string() ? item.value().get<std::string>() : item.value().dump());
  }
  return label;
}

// The page's curve: one value per length (passkey: the mean over its depths), null when not
// finite (JSON has no inf).
Json curve(const std::vector<LengthResult>& results, const std::string& metric) {
  std::map<int, std::pair<double, int>> by_length;  // sum, count
  for (const LengthResult& r : results) {
    auto& [sum, n] = by_length[r.length];
    sum += metric_value(r, metric);
    ++n;
  }
  Json points = Json::array();
  for (const auto& [length, sum_n] : by_length) {
    const double v = sum_n.first / sum_n.second;
    points.push_back({{"length", length}, {"value", std::isfinite(v) ? Json(v) : Json(nullptr)}});
  }
  return points;
}

// The figure a finished run is drawn in: one per task and seed ("length", "length-seed2").
std::string served_figure_name(const TrainSpec& spec) {
  return spec.seed == 1 ? spec.task : fmt::format("{}-seed{}", spec.task, spec.seed);
}

std::string served_experiment_config(
    const std::vector<std::pair<std::string, TrainSpec>>& finished) {
  // Figures in order of first appearance; TOML written by hand: JSON's strings and numbers are
  // valid TOML values.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> lines;
  std::map<std::string, const TrainSpec*> first;
  for (const auto& [label, spec] : finished) {
    const std::string name = served_figure_name(spec);
    if (!first.count(name)) {
      order.push_back(name);
      first[name] = &spec;
    }
    std::string line = fmt::format("{{ label = {}", Json(label).dump());
    const Json settings = lenlab::to_json(spec);  // items() of a temporary would dangle
    for (const auto& item : settings.items())
      if (item.key() != "task" && item.key() != "seed")
        line += fmt::format(", {} = {}", item.key(), item.value().dump());
    lines[name].push_back(line + " }");
  }
  std::string text =
      "# The runs of a `lenlab serve` session, for `lenlab plot` (written by the server after "
      "each\n"
      "# run; lab/serve/run_queue.hpp). One figure per task and seed; each line is one run.\n"
      "seeds = [1]\n";
  for (const std::string& name : order) {
    const TrainSpec& s = *first[name];
    text += fmt::format(
        "\n[figures.{}]\ntitle = {}\ntask = {}\nseeds = [{}]\nvary = \"settings\"\n"
        "values = [\n",
        Json(name).dump(), Json("Live page runs: " + s.task).dump(), Json(s.task).dump(), s.seed);
    for (const std::string& line : lines[name]) text += "  " + line + ",\n";
    text += "]\n";
  }
  return text;
}

}  // namespace lenlab
