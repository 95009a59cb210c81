#pragma once
// The numbers report.md's paper claims (report/paper_claims.hpp) are made of: each run's test MSE
// inside and beyond l_train, per seed; and every paired comparison the claims make (each
// reparameterization against identity, the lowest against its runner-up, each longer l_train
// against the one before), tested and Holm-adjusted as one family before any claim is written.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "report/verdict_words.hpp"
#include "stats/paired_test.hpp"

namespace lenlab::claims {

// A run's test MSE: averaged over its lengths inside / beyond l_train, the largest beyond, and at
// its longest length (NaN where it has none).
struct RunMse {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double within = kNone, beyond = kNone, max_beyond = kNone, at_l_test = kNone;
};
RunMse run_mse(const RunRecord& r);

// seed → a number of the line's run with that seed.
std::map<uint64_t, double> by_seed(const FigureLine& l, double RunMse::*what);

// The line labelled `label` with at least one run, or null.
const FigureLine* line_of(const FigureSummary& f, const std::string& label);

// The lines of an l_train figure (with runs) in order of l_train.
std::vector<const FigureLine*> by_l_train(const FigureSummary& f);

// The key of the test of one l_train step: "3b:5->10".
std::string step_key(const FigureSummary& f, const FigureLine& from, const FigureLine& to);

// The paired tests of the claims, adjusted together (Holm) before any claim is written.
class ClaimTests {
 public:
  // `key` names the test; method and baseline: per seed, lower is better (an MSE). Seeds in
  // both with finite values are the pairs; none: no test.
  void add(const std::string& key, const std::map<uint64_t, double>& method,
           const std::map<uint64_t, double>& baseline);
  void adjust();  // after the last add
  size_t size() const { return tests_.size(); }
  // helps (lower) / hurts (higher) / no detectable difference; not judged without a test.
  VerdictWord word_of(const std::string& key) const;
  // "difference −970 (−1.05e+03 to −892), lower in 3/3 seeds, adjusted p = 1".
  std::string numbers(const std::string& key) const;

 private:
  int index(const std::string& key) const;
  std::vector<std::string> keys_;
  std::vector<PairedComparison> tests_;
  std::vector<double> adjusted_;
};

// Every paired comparison of the reparameterization figures (1c, 4b) and the l_train figures
// (3b, 3a), adjusted. Keys: "1c:sqrt" (against identity), "1c:best" (the lowest against invsqrt,
// or invsqrt against the runner-up), step_key for each l_train step.
ClaimTests claim_tests(const std::vector<const FigureSummary*>& reparam,
                       const std::vector<const FigureSummary*>& l_train);

}  // namespace lenlab::claims
