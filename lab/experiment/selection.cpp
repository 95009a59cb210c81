#include "lab/experiment/selection.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/text_file.hpp"

namespace lenlab {

namespace {

using Json = nlohmann::ordered_json;

}  // namespace

std::string selection_json(const Selection& s) {
  Json j = {{"figures", s.figures}, {"seeds", s.seeds}, {"figure_seeds", s.figure_seeds}};
  if (!s.grown_seeds.empty()) {
    Json grown = Json::object();
    for (const auto& [figure, seeds] : s.grown_seeds) grown[figure] = seeds;
    j["grown_seeds"] = grown;
  }
  return j.dump(2) + "\n";
}

Selection read_selection(const std::filesystem::path& path) {
  const Json j = parse_json_input(read_text_file(path), path.string());
  const auto refuse = [&](const std::string& why) {
    return UsageError(
        fmt::format("{}: {}; this selection.json was not written by lenlab, or was changed",
                    path.string(), why));
  };
  if (!j.is_object())
    throw refuse(fmt::format("a JSON object was expected, not {}", j.type_name()));
  try {
    Selection s{j.at("figures").get<std::vector<std::string>>(),
                j.at("seeds").get<std::vector<uint64_t>>(),
                j.value("figure_seeds", true),
                {}};
    if (j.contains("grown_seeds"))
      s.grown_seeds = j.at("grown_seeds").get<std::map<std::string, std::vector<uint64_t>>>();
    for (const auto& [figure, seeds] : s.grown_seeds)
      if (seeds.empty()) throw refuse(fmt::format("grown_seeds: figure '{}' has no seeds", figure));
    return s;
  } catch (const Json::exception& e) {
    throw refuse(json_reason(e));
  }
}

void apply_selection(ExperimentConfig& config, const Selection& selection) {
  if (!selection.figure_seeds) use_only_experiment_seeds(config);  // --seeds N
  for (const auto& [name, seeds] : selection.grown_seeds) {
    FigureSpec* figure = nullptr;
    for (FigureSpec& f : config.figures)
      if (f.name == name) figure = &f;
    if (!figure)
      throw UsageError(fmt::format(
          "selection.json grows the seeds of figure '{}', which the experiment's config.toml "
          "does not have; valid figures: {}",
          name, join_choices(config.figure_names())));
    figure->seeds = seeds;
  }
}

}  // namespace lenlab
