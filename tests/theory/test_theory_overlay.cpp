// The theory drawn over a figure: one curve per (task, l_train) among its length and sum lines
// with identity targets, each the closed form of its own task, labelled by what differs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/theory_overlay.hpp"
#include "theory/theory_report.hpp"

namespace lenlab {
namespace {

FigureSummary figure_of(const std::vector<std::pair<std::string, int>>& lines) {
  FigureSummary fig;
  for (const auto& [task, l_train] : lines) {
    FigureLine line;
    line.label = task;
    line.spec.task = task;
    line.spec.l_train = l_train;
    line.spec.l_test = 20;
    fig.lines.push_back(line);
  }
  return fig;
}

std::vector<double> paper_mse(const std::string& task, int l_train) {
  TheoryOptions o;
  o.task = task;
  o.l_train = l_train;
  o.l_test = 20;
  std::vector<double> mse;
  for (const TheoryRow& row : compute_theory(o).rows) mse.push_back(row.paper_mse);
  return mse;
}

std::vector<std::string> labels(const std::vector<TheoryCurve>& curves) {
  std::vector<std::string> out;
  for (const TheoryCurve& c : curves) out.push_back(c.label);
  return out;
}

}  // namespace

TEST_CASE("theory overlay: a curve per task and training length, each its own task's closed form") {
  // A figure varying the task (course lesson 1): mean has no curve; length and sum one each.
  const std::vector<TheoryCurve> by_task =
      theory_curves(figure_of({{"mean", 10}, {"length", 10}, {"sum", 10}}));
  REQUIRE(labels(by_task) == std::vector<std::string>{"theory, length", "theory, sum"});
  const std::vector<double> length = paper_mse("length", 10), sum = paper_mse("sum", 10);
  REQUIRE(by_task[0].mse.size() == 20);
  CHECK(by_task[0].mse == length);
  CHECK(by_task[1].mse == sum);
  CHECK(by_task[0].mse != by_task[1].mse);

  const std::vector<TheoryCurve> by_l_train = theory_curves(figure_of({{"sum", 5}, {"sum", 10}}));
  CHECK(labels(by_l_train) ==
        std::vector<std::string>{"theory, l_train = 5", "theory, l_train = 10"});
  CHECK(by_l_train[1].mse == sum);

  CHECK(labels(theory_curves(figure_of({{"length", 10}}))) ==
        std::vector<std::string>{"linear-attention theory (paper's Γ*)"});
  CHECK(labels(theory_curves(figure_of({{"length", 5}, {"sum", 10}}))) ==
        std::vector<std::string>{"theory, length, l_train = 5", "theory, sum, l_train = 10"});
  CHECK(theory_curves(figure_of({{"mean", 10}})).empty());
}

}  // namespace lenlab
