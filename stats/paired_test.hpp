#pragma once
// The one test lenlab's verdicts use to compare a method with its baseline over seeds (issue
// "verdicts that carry their evidence"): runs of one seed share their batches and initial
// weights, so each seed gives a pair (method, baseline) of one metric over one test range, and the
// pairs' differences are what is tested.
//   - wins / losses / ties: seeds where the method is better, worse, equal (k of n, as a column);
//   - the mean and median difference, and a 95 % percentile-bootstrap interval on the mean
//     (10 000 resamples of the seeds, from a fixed seed: the same numbers every run);
//   - the exact two-sided sign test (binomial, p = 1/2, over the non-tied seeds) and the exact
//     two-sided Wilcoxon signed-rank test (zeros dropped, mid-ranks for ties; the exact
//     permutation distribution of the signed-rank sum, counted over all 2^n sign patterns by
//     dynamic programming, for n <= 100; the normal approximation with the tie correction above);
//     with no ties they are SciPy's binomtest and wilcoxon(method="exact");
//   - the smallest effect the seeds could have detected: the mean difference a paired t-test with
//     this many seeds and this spread finds with 80 % power at a two-sided 0.05,
//     (t_{0.975, n-1} + t_{0.80, n-1}) · sd / sqrt(n).
// holm_adjust corrects the p-values of all comparisons in one report (Holm 1979).
#include <cstdint>
#include <vector>

namespace lenlab {

struct PairedComparison {
  int n = 0;  // pairs (seeds)
  int wins = 0, losses = 0, ties = 0;
  double mean_difference = 0;                  // mean of (method − baseline)
  double median_difference = 0;                // median of (method − baseline)
  double interval_low = 0, interval_high = 0;  // 95 % bootstrap interval of the mean difference
  double p_sign = 1;                           // exact two-sided sign test
  double p_wilcoxon = 1;                       // two-sided signed-rank test (exact for n <= 100)
  bool wilcoxon_exact = true;
  double smallest_detectable = 0;  // |mean difference| found with 80 % power; +inf below 2 pairs
};

// `method` and `baseline`: the metric per seed, in the same seed order (same length, finite: a
// UsageError otherwise). `lower_is_better`: whether a smaller metric is a better one (an error),
// which decides wins and losses; the differences keep their sign.
PairedComparison compare_paired(const std::vector<double>& method,
                                const std::vector<double>& baseline, bool lower_is_better);

// The exact two-sided sign test of k wins in n non-tied pairs.
double sign_test_p(int wins, int n);

// The two-sided signed-rank test of `differences` (zeros dropped); `exact` set to whether the
// exact distribution was used.
double wilcoxon_signed_rank_p(const std::vector<double>& differences, bool* exact = nullptr);

// Holm's step-down adjustment of p-values (same order as given; each in [0, 1]).
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace lenlab
