#include "report/comparison_verdicts.hpp"

#include <limits>

namespace lenlab {

std::vector<Comparison> judge_comparisons(const std::vector<FigureSummary>& figures) {
  std::vector<Comparison> all;
  for (const FigureSummary& f : figures) {
    if (f.spec->baseline.empty()) continue;
    all.push_back({&f, TestRange{}, true, compare_lines(f), {}, {}});
    std::vector<TestRange> ranges;
    for (const TestRange& r : comparison_ranges())
      if (has_lengths_in(f, r)) ranges.push_back(r);
    if (ranges.size() >= 2)
      for (const TestRange& r : ranges) all.push_back({&f, r, false, compare_lines(f, r), {}, {}});
  }
  std::vector<double> p;
  for (const Comparison& c : all)
    for (const ComparedLine& l : c.lines)
      if (l.paired) p.push_back(l.paired->p_wilcoxon);
  const std::vector<double> adjusted = holm_adjust(p);
  size_t next = 0;
  for (Comparison& c : all)
    for (const ComparedLine& l : c.lines) {
      c.adjusted_p.push_back(l.paired ? adjusted[next++]
                                      : std::numeric_limits<double>::quiet_NaN());
      c.words.push_back(verdict_word(l, c.adjusted_p.back()));
    }
  return all;
}

size_t family_size(const std::vector<Comparison>& all) {
  size_t n = 0;
  for (const Comparison& c : all)
    for (const ComparedLine& l : c.lines) n += l.paired.has_value();
  return n;
}

}  // namespace lenlab
