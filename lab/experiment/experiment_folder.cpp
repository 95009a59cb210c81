#include "lab/experiment/experiment_folder.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "lab/experiment/plan.hpp"

namespace lenlab {

namespace fs = std::filesystem;

std::unique_ptr<ExperimentFolder> load_experiment_folder(const fs::path& dir) {
  if (!fs::exists(dir / "config.toml") || !fs::exists(dir / "selection.json"))
    throw UsageError(
        fmt::format("{} is not an experiment folder (no config.toml and "
                    "selection.json); make one with lenlab reproduce or lenlab run",
                    dir.string()));
  auto folder = std::make_unique<ExperimentFolder>();
  folder->config = load_experiment_config((dir / "config.toml").string());
  folder->selection = read_selection(dir / "selection.json");
  apply_selection(folder->config, folder->selection);
  const std::vector<std::string>& figures = folder->selection.figures;
  const std::vector<uint64_t>& seeds = folder->selection.seeds;

  // A line's run by its settings as the figure states them (init_from as written, no parent id):
  // the plan's id, which holds a fine-tune's parent.
  auto line_key = [](TrainSpec s) {
    s.init_parent.clear();
    return canonical_spec_text(s) + "\n" + s.init_from;
  };
  std::map<std::string, std::string> planned_id;
  for (const PlannedRun& r : plan_runs(folder->config, figures, seeds)) {
    planned_id.emplace(line_key(r.spec), r.id);
    if (auto rec = load_run(dir / "runs" / r.id)) folder->records.emplace(r.id, std::move(*rec));
  }
  const auto id_of = [&](const TrainSpec& s) {
    const auto it = planned_id.find(line_key(s));
    return it == planned_id.end() ? run_id(s) : it->second;
  };
  // plan_runs refused a selected figure that config.toml lacks.
  for (const std::string& name : figures)
    folder->summaries.push_back(
        summarize_figure(*folder->config.find(name), seeds, folder->records, id_of));
  return folder;
}

}  // namespace lenlab
