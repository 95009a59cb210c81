#pragma once
// report.md's "Method comparison": every figure with a `baseline` line (a method comparison on one
// task, e.g. configs/methods.toml's compare_* figures) becomes a column of one table, its lines
// ranked and marked as plots/method_comparison.hpp says.
#include <string>
#include <vector>

#include "plots/method_comparison.hpp"

namespace lenlab {

// The section; empty when no figure has a baseline.
std::string comparison_section(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
