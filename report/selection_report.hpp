#pragma once
// report.md's account of a config's [select] grid (results/validation_choice.hpp): per figure,
// for each line and seed, the combination kept, its validation score, and every combination tried.
#include <string>

#include "plots/figure_data.hpp"

namespace lenlab {

// Empty when the figure has no grid.
std::string selection_section(const FigureSummary& f);

}  // namespace lenlab
