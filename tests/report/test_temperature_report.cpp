// report.md's temperature table (report/temperature_report.hpp): Algorithm 1's choice per length
// with its range over seeds, beside the closed forms' means over the seeds that have a solution.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "report/temperature_report.hpp"

using namespace lenlab;

TEST_CASE("temperature table: searched mean and range, closed forms over the seeds that solve") {
  FigureSpec spec;
  spec.name = "temperature";
  RunRecord a, b;
  a.temperature_by_length = {{24, 0.7}, {32, 0.6}};
  b.temperature_by_length = {{24, 0.75}, {32, 0.6}};
  a.temperature_pmax_closed_form = {{24, 1.1}, {32, 1.2}};
  b.temperature_pmax_closed_form = {{24, 1.3}, {32, std::nan("")}};
  a.temperature_entropy_closed_form = {{24, std::nan("")}, {32, 0.9}};
  b.temperature_entropy_closed_form = {{24, std::nan("")}, {32, 0.95}};
  b.temperature_at_bound = {{32, "low"}};
  FigureSummary fig;
  fig.spec = &spec;
  FigureLine line;
  line.label = "auto-pmax";
  line.runs = {&a, &b};
  fig.lines.push_back(line);
  const std::string t = temperature_section(fig);
  CHECK(t.find("| auto-pmax | 24 | 0.725 | 0.7–0.75 | 1.2 | none | — |") != std::string::npos);
  CHECK(t.find("| auto-pmax | 32 | 0.6 | 0.6–0.6 | 1.2 (1 of 2) | 0.925 | low 1/2 |") !=
        std::string::npos);
  // No run searched: no table.
  fig.lines[0].runs.clear();
  CHECK(temperature_section(fig).empty());
}
