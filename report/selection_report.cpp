#include "report/selection_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/in_range_fit.hpp"

namespace lenlab {

namespace {

// "lr 0.0003, warmup_steps 100": the grid's settings of one run.
std::string grid_values(const SettingGrid& grid, const RunRecord& r) {
  const auto all = nlohmann::ordered_json::parse(canonical_spec_text(r.spec));
  std::string out;
  for (const std::string& k : grid.keys)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, all.at(k).dump());
  return out;
}

std::string score(const RunRecord& r) {
  return r.validation ? fmt::format("{:.4g}", *r.validation) : "none";
}

}  // namespace

std::string selection_section(const FigureSummary& f) {
  const SettingGrid& grid = f.spec->grid;
  if (grid.empty()) return "";
  std::string rows, rule;
  for (const FigureLine& line : f.lines)
    for (const GridChoice& c : line.choices) {
      if (rule.empty()) rule = in_range_rule(c.chosen->spec).text();
      std::string tried;
      for (const RunRecord* r : c.tried)
        tried +=
            fmt::format("{}{}: {}", tried.empty() ? "" : " · ", grid_values(grid, *r), score(*r));
      const RunRecord& kept = *c.chosen;
      const std::string trained =
          kept.stop_reason.empty() ? "all"
                                   : fmt::format("{} ({})", kept.steps_trained, kept.stop_reason);
      rows += fmt::format("| {} | {} | {} | {} | {} | {} |\n", line.label, c.seed,
                          grid_values(grid, kept), score(kept), trained, tried);
    }
  if (rows.empty())
    return "No line and seed of this figure has every [select] combination run yet.\n\n";
  return fmt::format(
      "Settings chosen per line and seed by [select] ({} combinations): the run whose model "
      "scored best on validation sequences inside its training range ({}), never on a test "
      "length; the figure's curves and tables are the chosen runs'. Steps trained: with "
      "--until-fit, where the chosen run stopped and why (fit: its validation score met the rule; "
      "stalled: no better score for --fit-patience checks; steps: it ran every step).\n\n"
      "| line | seed | chosen | validation | steps trained | tried (validation) |\n"
      "|---|---|---|---|---|---|\n{}\n",
      grid.size(), rule, rows);
}

}  // namespace lenlab
