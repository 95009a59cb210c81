#include "report/theory_overlay.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "theory/theory_report.hpp"

namespace lenlab {

std::vector<TheoryCurve> theory_curves(const FigureSummary& figure) {
  // The theory predicts a test MSE against length: nothing to draw over a token figure.
  if (figure.spec && (figure.spec->metric != "mse" || figure.spec->plot != "length")) return {};
  // One curve per (task, l_train) among the lines it describes: a figure may vary either.
  std::set<std::pair<std::string, int>> settings;
  int l_test = 0;
  for (const FigureLine& line : figure.lines) {
    const TrainSpec& s = line.spec;
    if ((s.task == "length" || s.task == "sum") && s.reparam == "identity" &&
        s.reparam_shift == 0) {
      settings.insert({s.task, s.l_train});
      l_test = s.l_test;
    }
  }
  std::set<std::string> tasks;
  std::set<int> l_trains;
  for (const auto& [task, l_train] : settings) {
    tasks.insert(task);
    l_trains.insert(l_train);
  }
  std::vector<TheoryCurve> curves;
  for (const auto& [task, l_train] : settings) {
    TheoryOptions o;
    o.task = task;
    o.l_train = l_train;
    o.l_test = l_test;
    const TheoryReport report = compute_theory(o);
    TheoryCurve curve;
    if (settings.size() == 1)
      curve.label = "linear-attention theory (paper's Γ*)";
    else if (tasks.size() == 1)
      curve.label = fmt::format("theory, l_train = {}", l_train);
    else if (l_trains.size() == 1)
      curve.label = fmt::format("theory, {}", task);
    else
      curve.label = fmt::format("theory, {}, l_train = {}", task, l_train);
    for (const TheoryRow& row : report.rows)
      if (std::isfinite(row.paper_mse)) {
        curve.lengths.push_back(row.length);
        curve.mse.push_back(row.paper_mse);
      }
    curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace lenlab
