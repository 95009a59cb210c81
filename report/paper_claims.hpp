#pragma once
// report.md's "Claims": each claim the main paper makes about its synthetic figures, checked
// against the runs, in the grammar of every verdict: the claim (paper 000 and its figure or
// theorem), the setup, the test range as multiples of l_train, n seeds, the numbers, and a word by
// fixed rules:
//   supported / not supported   the criterion holds / fails in every seed (threshold claims), or
//                               the paired test decides it (comparisons: Holm-adjusted p < 0.05
//                               over the comparisons of this section);
//   not decided                 a comparison whose seeds cannot tell (no detectable difference).
// Every claim names the runs that did not fit their own training range (results/in_range_fit.hpp).
// A growth exponent is fitted only to a line whose error past l_train rises well above its
// in-range error (LineStats::flat); a flat line is "flat: no growth to fit".
#include <string>
#include <vector>

#include "plots/figure_data.hpp"

namespace lenlab {

// The section's claims, for the paper's figures that are complete in `figures` (empty when none).
std::string paper_claims(const std::vector<FigureSummary>& figures);

}  // namespace lenlab
