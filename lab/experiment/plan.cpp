#include "lab/experiment/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "lab/run/init_from.hpp"
#include "results/figure_setup.hpp"

namespace lenlab {

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
      for (uint64_t seed : fig.line_seeds(line, seeds))
        for (TrainSpec& candidate : fig.line_candidates(line, seed)) {  // [select]: several
          planner.chain = {fig.name};
          planner.add(std::move(candidate));
        }
  }
  return std::move(planner.runs);
}

}  // namespace lenlab
