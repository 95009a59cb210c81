#include "lab/theory_overlay.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "theory/theory_report.hpp"

namespace lenlab {

std::vector<TheoryCurve> theory_curves(const FigureSummary& figure) {
  // The theory predicts a test MSE against length: nothing to draw over a token figure.
  if (figure.spec && (figure.spec->metric != "mse" || figure.spec->plot != "length")) return {};
  std::set<int> l_trains;
  const TrainSpec* setting = nullptr;
  for (const FigureLine& line : figure.lines) {
    const TrainSpec& s = line.spec;
    if ((s.task == "length" || s.task == "sum") && s.reparam == "identity" &&
        s.reparam_shift == 0) {
      l_trains.insert(s.l_train);
      setting = &s;
    }
  }
  std::vector<TheoryCurve> curves;
  for (int l_train : l_trains) {
    TheoryOptions o;
    o.task = setting->task;
    o.l_train = l_train;
    o.l_test = setting->l_test;
    const TheoryReport report = compute_theory(o);
    TheoryCurve curve;
    curve.label = l_trains.size() == 1 ? "linear-attention theory (paper's Γ*)"
                                       : fmt::format("theory, l_train = {}", l_train);
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
