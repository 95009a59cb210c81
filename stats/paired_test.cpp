#include "stats/paired_test.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "stats/ranks.hpp"

namespace lenlab {

namespace {

constexpr int kBootstrapResamples = 10000;
constexpr std::uint64_t kBootstrapSeed = 20261128;  // fixed: a report's numbers never change
constexpr int kMaxExactPairs = 100;  // the exact distribution's table has n(n+1) + 1 entries

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The q-quantile of sorted values, linearly interpolated (R's type 7, NumPy's default).
double quantile_of_sorted(const std::vector<double>& v, double q) {
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(at));
  const size_t above = std::min(below + 1, v.size() - 1);
  return v[below] + (at - static_cast<double>(below)) * (v[above] - v[below]);
}

// Twice the mid-ranks of |d|: exact integers.
std::vector<long> doubled_midranks(const std::vector<double>& magnitudes) {
  std::vector<long> doubled;
  for (const double r : midranks(magnitudes)) doubled.push_back(std::lround(2 * r));
  return doubled;
}

}  // namespace

double sign_test_p(int wins, int n) {
  if (n <= 0) return 1;
  const boost::math::binomial_distribution<double> binomial(n, 0.5);
  const double at_most = boost::math::cdf(binomial, wins);
  const double at_least =
      wins == 0 ? 1 : boost::math::cdf(boost::math::complement(binomial, wins - 1));
  return std::min(1.0, 2 * std::min(at_most, at_least));
}

double wilcoxon_signed_rank_p(const std::vector<double>& differences, bool* exact) {
  std::vector<double> magnitudes;
  std::vector<bool> positive;
  for (const double d : differences)
    if (d != 0) {
      magnitudes.push_back(std::abs(d));
      positive.push_back(d > 0);
    }
  const size_t n = magnitudes.size();
  if (exact) *exact = true;
  if (n == 0) return 1;
  const std::vector<long> ranks = doubled_midranks(magnitudes);
  long observed = 0, total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += ranks[i];
    if (positive[i]) observed += ranks[i];
  }
  if (static_cast<int>(n) <= kMaxExactPairs) {
    // counts[s]: sign patterns whose positive ranks sum to s (doubled); 2^n of them in all.
    std::vector<double> counts(static_cast<size_t>(total) + 1, 0.0);
    counts[0] = 1;
    long reach = 0;
    for (const long r : ranks) {
      for (long s = reach; s >= 0; --s)
        counts[static_cast<size_t>(s + r)] += counts[static_cast<size_t>(s)];
      reach += r;
    }
    const double patterns = std::ldexp(1.0, static_cast<int>(n));
    double at_most = 0, at_least = 0;
    for (long s = 0; s <= total; ++s) {
      if (s <= observed) at_most += counts[static_cast<size_t>(s)];
      if (s >= observed) at_least += counts[static_cast<size_t>(s)];
    }
    return std::min(1.0, 2 * std::min(at_most, at_least) / patterns);
  }
  if (exact) *exact = false;
  double square_sum = 0;
  for (const long r : ranks) square_sum += static_cast<double>(r) * static_cast<double>(r);
  const double mean = static_cast<double>(total) / 2, sd = std::sqrt(square_sum / 4);
  const double z = (static_cast<double>(observed) - mean) / sd;
  return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(
                               boost::math::normal_distribution<double>(), std::abs(z))));
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;  // step-down: an adjusted p is never below the one before it
  for (size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p[order[i]]));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

PairedComparison compare_paired(const std::vector<double>& method,
                                const std::vector<double>& baseline, bool lower_is_better) {
  if (method.size() != baseline.size() || method.empty())
    throw UsageError(
        fmt::format("a paired comparison needs the same seeds on both sides: {} values against {}",
                    method.size(), baseline.size()));
  PairedComparison c;
  c.n = static_cast<int>(method.size());
  std::vector<double> d(method.size());
  for (size_t i = 0; i < method.size(); ++i) {
    if (!std::isfinite(method[i]) || !std::isfinite(baseline[i]))
      throw UsageError(fmt::format("seed {} of a paired comparison is not finite ({} against {})",
                                   i + 1, method[i], baseline[i]));
    d[i] = method[i] - baseline[i];
    const bool better = lower_is_better ? d[i] < 0 : d[i] > 0;
    if (d[i] == 0)
      ++c.ties;
    else if (better)
      ++c.wins;
    else
      ++c.losses;
  }
  c.mean_difference = std::accumulate(d.begin(), d.end(), 0.0) / c.n;
  c.median_difference = median_of(d);

  std::mt19937_64 rng(kBootstrapSeed);
  std::uniform_int_distribution<size_t> pick(0, d.size() - 1);
  std::vector<double> means(kBootstrapResamples);
  for (double& m : means) {
    double sum = 0;
    for (size_t i = 0; i < d.size(); ++i) sum += d[pick(rng)];
    m = sum / c.n;
  }
  std::sort(means.begin(), means.end());
  c.interval_low = quantile_of_sorted(means, 0.025);
  c.interval_high = quantile_of_sorted(means, 0.975);

  c.p_sign = sign_test_p(c.wins, c.wins + c.losses);
  c.p_wilcoxon = wilcoxon_signed_rank_p(d, &c.wilcoxon_exact);

  if (c.n < 2) {
    c.smallest_detectable = std::numeric_limits<double>::infinity();
  } else {
    double squares = 0;
    for (const double x : d) squares += (x - c.mean_difference) * (x - c.mean_difference);
    const double sd = std::sqrt(squares / (c.n - 1));
    const boost::math::students_t_distribution<double> t(c.n - 1);
    c.smallest_detectable =
        (boost::math::quantile(t, 0.975) + boost::math::quantile(t, 0.80)) * sd / std::sqrt(c.n);
  }
  return c;
}

}  // namespace lenlab
