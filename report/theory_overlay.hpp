#pragma once
// The linear-attention theory drawn over a figure: for every line that predicts length or sum
// with identity targets (Theorem 2's setting), the paper's closed-form test error (its Γ* form,
// with the corrected (l+1)/(4l) constant for sum), one curve per distinct (task, l_train). None for
// a figure that does not draw the MSE against length (the token tasks' figures).
#include <vector>

#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"

namespace lenlab {

std::vector<TheoryCurve> theory_curves(const FigureSummary& figure);

}  // namespace lenlab
