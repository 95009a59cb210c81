#include "report/verdict_words.hpp"

#include <string>

namespace lenlab {

VerdictWord verdict_word(const PairedComparison* test, bool lower_is_better, double adjusted_p) {
  if (!test) return VerdictWord::kNotJudged;
  if (adjusted_p >= kVerdictAlpha) return VerdictWord::kNoDetectableDifference;
  const bool better = lower_is_better ? test->mean_difference < 0 : test->mean_difference > 0;
  return better ? VerdictWord::kHelps : VerdictWord::kHurts;
}

VerdictWord verdict_word(const ComparedLine& line, double adjusted_p) {
  return verdict_word(line.paired ? &*line.paired : nullptr, line.lower_is_better, adjusted_p);
}

std::string verdict_name(VerdictWord word) {
  switch (word) {
    case VerdictWord::kHelps:
      return "helps";
    case VerdictWord::kHurts:
      return "hurts";
    case VerdictWord::kNoDetectableDifference:
      return "no detectable difference";
    case VerdictWord::kNotJudged:
      break;
  }
  return "not judged";
}

std::string not_judged_reason(const ComparedLine& line) {
  if (line.paired) return "";
  if (line.not_finite) return "a seed's average is not finite";
  if (line.n_seeds == 0) return "no completed run";
  if (line.baseline_unfit)
    return "the baseline did not fit its own training range in most seeds (" + line.in_range_rule +
           "): extrapolation is not judged on models that did not learn";
  if (!line.seeds_not_fit.empty())
    return "no seed where both it and the baseline fit their training range (" +
           line.in_range_rule + ")";
  return "no seed in common with the baseline";
}

}  // namespace lenlab
