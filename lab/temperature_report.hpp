#pragma once
// report.md's temperature table under a figure whose runs searched an attention temperature
// (temperature = auto-pmax / auto-entropy): per line and test length past l_train, the temperature
// paper 002's Algorithm 1 chose (mean and range over seeds) beside its Propositions 1 and 2 (mean
// over seeds of those that have a solution), as its Figure 3 compares them.
#include <string>

#include "plots/figure_data.hpp"

namespace lenlab {

// Empty when no run of the figure searched a temperature.
std::string temperature_section(const FigureSummary& fig);

}  // namespace lenlab
