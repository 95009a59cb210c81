#include "results/correlation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "core/rng.hpp"
#include "stats/ranks.hpp"

namespace lenlab {

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("pearson: x and y differ in length");
  const size_t n = x.size();
  if (n < 3) return std::numeric_limits<double>::quiet_NaN();
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("spearman: x and y differ in length");
  // A NaN has no rank (it compares false with everything: sorting by < is undefined and a tie
  // run would never end); the coefficient is then undefined too. The readers refuse a NaN in a
  // file; this keeps a NaN from elsewhere from hanging.
  for (const std::vector<double>* v : {&x, &y})
    for (const double value : *v)
      if (std::isnan(value)) return std::numeric_limits<double>::quiet_NaN();
  return pearson(midranks(x), midranks(y));
}

namespace {

// The percentile interval of the resamples' statistics (`values`, the defined ones of
// `resamples`): undefined when fewer than half gave a number.
Interval percentile_interval(std::vector<double> values, int resamples, double level) {
  Interval out;
  if (2 * values.size() < static_cast<size_t>(resamples)) return out;
  std::sort(values.begin(), values.end());
  // The empirical quantile at q: the value of rank ⌈q·m⌉ (1-based), clamped to the sample.
  auto quantile = [&](double q) {
    const auto m = static_cast<double>(values.size());
    const auto rank = static_cast<size_t>(std::clamp(std::ceil(q * m), 1.0, m));
    return values[rank - 1];
  };
  out.lo = quantile((1 - level) / 2);
  out.hi = quantile((1 + level) / 2);
  return out;
}

void check_bootstrap(size_t nx, size_t ny, int resamples, double level) {
  if (nx != ny) throw std::invalid_argument("bootstrap_interval: x and y differ in length");
  if (!(level > 0 && level < 1) || resamples < 1)
    throw std::invalid_argument("bootstrap_interval: level must be in (0, 1), resamples >= 1");
}

}  // namespace

Interval bootstrap_interval(const std::vector<double>& x, const std::vector<double>& y,
                            const PairStatistic& stat, int resamples, double level, uint64_t seed) {
  check_bootstrap(x.size(), y.size(), resamples, level);
  const size_t n = x.size();
  if (n < 3) return {};
  Rng rng(seed);
  std::vector<double> values, xs(n), ys(n);
  for (int b = 0; b < resamples; ++b) {
    for (size_t i = 0; i < n; ++i) {
      const auto j = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(n) - 1));
      xs[i] = x[j];
      ys[i] = y[j];
    }
    const double v = stat(xs, ys);
    if (std::isfinite(v)) values.push_back(v);
  }
  return percentile_interval(std::move(values), resamples, level);
}

Interval cluster_bootstrap_interval(const std::vector<double>& x, const std::vector<double>& y,
                                    const std::vector<int>& cluster, const PairStatistic& stat,
                                    int resamples, double level, uint64_t seed) {
  check_bootstrap(x.size(), y.size(), resamples, level);
  if (cluster.size() != x.size())
    throw std::invalid_argument("cluster_bootstrap_interval: one cluster per pair is needed");
  std::map<int, std::vector<size_t>> members;
  for (size_t i = 0; i < cluster.size(); ++i) members[cluster[i]].push_back(i);
  const std::vector<std::vector<size_t>> groups = [&] {
    std::vector<std::vector<size_t>> g;
    for (auto& [id, m] : members) g.push_back(std::move(m));
    return g;
  }();
  const size_t C = groups.size();
  if (x.size() < 3 || C < 2) return {};
  Rng rng(seed);
  std::vector<double> values, xs, ys;
  for (int b = 0; b < resamples; ++b) {
    xs.clear();
    ys.clear();
    for (size_t c = 0; c < C; ++c) {
      const auto& g = groups[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(C) - 1))];
      for (const size_t i : g) {
        xs.push_back(x[i]);
        ys.push_back(y[i]);
      }
    }
    const double v = stat(xs, ys);
    if (std::isfinite(v)) values.push_back(v);
  }
  return percentile_interval(std::move(values), resamples, level);
}

}  // namespace lenlab
