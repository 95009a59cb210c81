#pragma once
// Correlation across runs (the report's trends, paper 000's Table 1): Pearson's r and Spearman's
// ρ (Pearson's r of the ranks, tied values sharing their average rank). NaN when fewer than 3
// pairs or either side is constant: no correlation is defined then.
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace lenlab {

double pearson(const std::vector<double>& x, const std::vector<double>& y);
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// A confidence interval; NaN ends when it is undefined.
struct Interval {
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
};

using PairStatistic = std::function<double(const std::vector<double>&, const std::vector<double>&)>;

// The percentile bootstrap interval of stat(x, y) at `level` (e.g. 0.95): `resamples` times, n of
// the n pairs drawn with replacement (a fixed Rng(seed), so a report is reproducible), the
// statistic of each; the (1 − level)/2 and (1 + level)/2 quantiles of the defined ones (a resample
// with a constant side has no correlation and is dropped). Undefined (NaN ends) when fewer than
// half the resamples give a number. The pairs are treated as independent draws: runs of one
// setting with different seeds are, runs sharing a training are not (count each once).
Interval bootstrap_interval(const std::vector<double>& x, const std::vector<double>& y,
                            const PairStatistic& stat, int resamples = 2000, double level = 0.95,
                            uint64_t seed = 20241125);

// The same with the pairs in clusters that are not independent (a run's points at several
// lengths): each resample draws as many clusters as there are, with replacement, and takes every
// pair of each (a cluster bootstrap). cluster[i] names pair i's. Undefined with fewer than 2
// clusters or 3 pairs.
Interval cluster_bootstrap_interval(const std::vector<double>& x, const std::vector<double>& y,
                                    const std::vector<int>& cluster, const PairStatistic& stat,
                                    int resamples = 2000, double level = 0.95,
                                    uint64_t seed = 20241125);

}  // namespace lenlab
