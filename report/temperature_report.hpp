#pragma once
// report.md's temperature table under a figure whose runs searched an attention temperature
// (temperature = auto-pmax / auto-entropy): per line and test length past l_train, the temperature
// paper 002's Algorithm 1 chose (mean and range over seeds) beside its Propositions 1 and 2 (mean
// over seeds of those that have a solution), as its Figure 3 compares them, and in how many seeds
// the search stopped at a bound of its grid. Under a plot "temperature" figure, the curve's table
// instead: per length the metric at τ = 1, at the grid's best τ and at each criterion's τ, and how
// often each criterion beat τ = 1.
#include <string>

#include "plots/figure_data.hpp"

namespace lenlab {

// Empty when no run of the figure searched a temperature.
std::string temperature_section(const FigureSummary& fig);

}  // namespace lenlab
