#pragma once
// Correlation across runs (the report's trends, paper 000's Table 1): Pearson's r and Spearman's
// ρ (Pearson's r of the ranks, tied values sharing their average rank). NaN when fewer than 3
// pairs or either side is constant: no correlation is defined then.
#include <vector>

namespace lenlab {

double pearson(const std::vector<double>& x, const std::vector<double>& y);
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace lenlab
