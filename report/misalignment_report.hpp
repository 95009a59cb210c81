#pragma once
// report.md's section of a plot "misalignment" figure: does the long-short misalignment at
// l_train predict the metric far past training better than the metric at l_train does (paper
// 000's Table 1)? The coefficients across runs, and the answer in words.
#include <string>

#include "plots/figure_data.hpp"

namespace lenlab {

std::string misalignment_section(const FigureSummary& fig);

}  // namespace lenlab
