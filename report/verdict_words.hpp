#pragma once
// The word a computed verdict ends in, by fixed rules (never typed by hand):
//   helps / hurts              the paired test's p, Holm-adjusted over every comparison of the
//                              report, is below 0.05, in the metric's better / worse direction;
//   no detectable difference   otherwise (the line says the smallest effect the seeds could have
//                              detected: stats/paired_test.hpp);
//   not judged                 no test: no seed in common with the baseline where both runs fit
//                              their training range (results/in_range_fit.hpp), the baseline
//                              itself did not fit it in most seeds, or a seed's average is not
//                              finite.
#include <string>

#include "plots/method_comparison.hpp"

namespace lenlab {

inline constexpr double kVerdictAlpha = 0.05;

enum class VerdictWord { kHelps, kHurts, kNoDetectableDifference, kNotJudged };

// The rule itself: `test` (method − baseline; null when there is none) and its p_wilcoxon after
// holm_adjust; `lower_is_better` names the metric's better direction.
VerdictWord verdict_word(const PairedComparison* test, bool lower_is_better, double adjusted_p);

// `adjusted_p`: the line's p_wilcoxon after holm_adjust (ignored when the line has no test).
VerdictWord verdict_word(const ComparedLine& line, double adjusted_p);

std::string verdict_name(VerdictWord word);  // "helps", …, "not judged"

// Why a line is not judged, in words ("" when it is).
std::string not_judged_reason(const ComparedLine& line);

}  // namespace lenlab
