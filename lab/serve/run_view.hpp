#pragma once
// How the live page's runs look from outside the server (lab/serve/run_queue.hpp): their settings
// with no server path in them, their label, their curve, and the experiment config that lists the
// finished ones for `lenlab plot`.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// Settings as clients see them: a path on the server (a kServerPath row) never, an offered corpus
// (name → file) by its name; any other path is left out (a fine-tune's parent stays named by
// init_parent's id).
nlohmann::ordered_json for_clients(nlohmann::ordered_json settings,
                                   const std::map<std::string, std::string>& corpora);

// "length · rope · sqrt · l_train 10 · steps 1000": the four choices every run makes, then each
// setting that differs from the page's defaults.
std::string run_label(const TrainSpec& s, const std::map<std::string, std::string>& corpora);

// The page's curve: [{length, value}], one value per length (passkey: the mean over its depths),
// null when not finite (JSON has no inf).
nlohmann::ordered_json curve(const std::vector<LengthResult>& results, const std::string& metric);

// The figure a finished run is drawn in: one per task and seed ("length", "length-seed2").
std::string served_figure_name(const TrainSpec& spec);

// The experiment config (lab/experiment/experiment_config.hpp) that lists finished runs, so that
// `lenlab plot <out>` draws them: one figure per task and seed, its lines the runs (vary =
// "settings"), each line every setting of its run, so its run id is the folder's.
// `finished`: each run's line label and settings.
std::string served_experiment_config(
    const std::vector<std::pair<std::string, TrainSpec>>& finished);

}  // namespace lenlab
