#pragma once
// Every method comparison of one report, judged together: each figure with a `baseline` line over
// every length beyond l_train (its main table) and, where it has lengths in more than one, over
// each range of comparison_ranges(); the lines' paired tests adjusted as one family (Holm) and
// each line given its word (report/verdict_words.hpp). report.md's method comparison, the Python
// module's lenlab.compare() and `lenlab run --seeds-until-decided` read the same judgement.
#include <vector>

#include "plots/method_comparison.hpp"
#include "report/verdict_words.hpp"

namespace lenlab {

// One figure compared over one test range.
struct Comparison {
  const FigureSummary* fig = nullptr;
  TestRange range;
  bool main = true;  // every length beyond l_train (report.md's table), else a range table
  std::vector<ComparedLine> lines;
  std::vector<double> adjusted_p;  // [line]; NaN where the line has no test
  std::vector<VerdictWord> words;  // [line]
};

// In the order of `figures`, each figure's main comparison first, then its ranges. Figures
// without a baseline are left out. The Comparisons point into `figures`.
std::vector<Comparison> judge_comparisons(const std::vector<FigureSummary>& figures);

// How many lines of `all` have a test: the size of the Holm family.
size_t family_size(const std::vector<Comparison>& all);

}  // namespace lenlab
