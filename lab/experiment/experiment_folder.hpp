#pragma once
// An experiment folder read back: its config, selection.json, the runs the selection plans that
// finished, and every selected figure summarized from them — what `lenlab plot` draws from, what
// `lenlab run --seeds-until-decided` judges between rounds, and what lenlab.compare() returns
// (report/comparison_rows.hpp). Reads only: writes nothing into the folder.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/selection.hpp"
#include "plots/figure_data.hpp"
#include "results/run_record.hpp"

namespace lenlab {

struct ExperimentFolder {
  ExperimentConfig config;  // config.toml, with the selection applied (apply_selection)
  Selection selection;
  std::map<std::string, RunRecord> records;  // by run id: the planned runs found finished
  std::vector<FigureSummary> summaries;      // [selection.figures]; point into config and records
  ExperimentFolder() = default;
  ExperimentFolder(const ExperimentFolder&) = delete;  // the summaries' pointers stay valid
  ExperimentFolder& operator=(const ExperimentFolder&) = delete;
};

// A folder without config.toml and selection.json is a UsageError saying how to make one.
std::unique_ptr<ExperimentFolder> load_experiment_folder(const std::filesystem::path& dir);

}  // namespace lenlab
