#pragma once
// selection.json, as `lenlab run` / `reproduce` write it into an experiment folder: which of the
// config's figures and seeds were run, so that `lenlab plot` (and lenlab.compare() in Python)
// read the folder's runs as the run planned them.
//   {"figures": [names], "seeds": [the experiment's seeds], "figure_seeds": false after --seeds N,
//    "grown_seeds": {figure: [every seed it runs]}}   (the last only after --seeds-until-decided)
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"

namespace lenlab {

struct Selection {
  std::vector<std::string> figures;
  std::vector<uint64_t> seeds;
  bool figure_seeds = true;  // false: --seeds N replaced the figures' own seeds
  // The figures whose seeds --seeds-until-decided grew (lab/experiment/seeds_until_decided.hpp),
  // each with every seed its lines now run (the first ones, then the added ones). Empty: none.
  std::map<std::string, std::vector<uint64_t>> grown_seeds;
};

// The file's text (JSON, indented, ending in a newline).
std::string selection_json(const Selection& selection);

// Reads it back; a file that lenlab did not write is a UsageError naming it.
Selection read_selection(const std::filesystem::path& path);

// `config` as the selection ran it: every figure on the experiment's seeds after --seeds N, and
// the grown figures on their grown seeds. A grown figure the config lacks is a UsageError.
void apply_selection(ExperimentConfig& config, const Selection& selection);

}  // namespace lenlab
