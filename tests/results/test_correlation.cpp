// The correlations of the misalignment figure (results/correlation.hpp): Pearson and Spearman
// against hand values, the percentile bootstrap against Fisher's z, the cluster bootstrap.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/rng.hpp"
#include "results/correlation.hpp"

using namespace lenlab;

TEST_CASE("correlation: Pearson and Spearman against hand values, undefined where they are") {
  CHECK(pearson({1, 2, 3, 4}, {2, 4, 6, 8}) == doctest::Approx(1.0));
  CHECK(pearson({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
  CHECK(pearson({1, 2, 3}, {1, 3, 2}) == doctest::Approx(0.5));
  // Deviations -2..2 against -1, -2, 1, 0, 2: 8 / sqrt(10 · 10).
  CHECK(pearson({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) == doctest::Approx(0.8));
  CHECK(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) == doctest::Approx(0.8));
  CHECK(spearman({1, 10, 100, 1000}, {1, 2, 3, 4}) == doctest::Approx(1.0));  // ranks only
  // Ties share their average rank: x ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4.
  CHECK(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) == doctest::Approx(4.5 / std::sqrt(22.5)));
  // Ties on both sides: ranks 1.5, 1.5, 3, 4 against 1, 2.5, 2.5, 4: 3.75 / sqrt(4.5 · 4.5).
  CHECK(spearman({1, 1, 2, 3}, {1, 2, 2, 3}) == doctest::Approx(5.0 / 6.0));
  CHECK(std::isnan(pearson({1, 2}, {1, 2})));  // fewer than 3 pairs
  CHECK(std::isnan(spearman({1, 2}, {2, 1})));
  CHECK(std::isnan(pearson({}, {})));
  CHECK(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));  // a constant side
  CHECK(std::isnan(pearson({1, 2, 3}, {4, 4, 4})));
  CHECK(std::isnan(spearman({5, 5, 5}, {1, 2, 3})));
  CHECK_THROWS_AS(pearson({1, 2, 3}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(spearman({1, 2, 3}, {1, 2}), std::invalid_argument);
}

TEST_CASE("correlation: the bootstrap interval against Fisher's z interval, reproducible") {
  // 400 pairs with correlation 0.5: Fisher's z gives tanh(atanh(r) ± 1.96 / sqrt(n − 3)), which
  // the percentile bootstrap approaches for a sample this large.
  Rng rng(3);
  std::vector<double> x, y;
  for (int i = 0; i < 400; ++i) {
    const double a = rng.normal(), b = rng.normal();
    x.push_back(a);
    y.push_back(0.5 * a + std::sqrt(0.75) * b);
  }
  const double r = pearson(x, y);
  const Interval ci = bootstrap_interval(x, y, pearson);
  const double half = 1.96 / std::sqrt(400.0 - 3);
  CHECK(ci.lo < r);
  CHECK(ci.hi > r);
  CHECK(ci.lo == doctest::Approx(std::tanh(std::atanh(r) - half)).epsilon(0.03));
  CHECK(ci.hi == doctest::Approx(std::tanh(std::atanh(r) + half)).epsilon(0.03));
  const Interval again = bootstrap_interval(x, y, pearson);  // the same fixed stream
  CHECK(again.lo == ci.lo);
  CHECK(again.hi == ci.hi);
  // A wider level gives a wider interval; too few pairs, or a constant side, none.
  const Interval wide = bootstrap_interval(x, y, pearson, 2000, 0.99);
  CHECK(wide.lo < ci.lo);
  CHECK(wide.hi > ci.hi);
  CHECK(std::isnan(bootstrap_interval({1, 2}, {1, 2}, pearson).lo));
  CHECK(std::isnan(bootstrap_interval({1, 1, 1, 1}, {1, 2, 3, 4}, spearman).hi));
  CHECK_THROWS_AS(bootstrap_interval({1, 2, 3}, {1, 2}, pearson), std::invalid_argument);
}

TEST_CASE(
    "correlation: the cluster bootstrap is the pair bootstrap for singletons, wider for copies") {
  Rng rng(5);
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i) {
    const double a = rng.normal();
    x.push_back(a);
    y.push_back(0.5 * a + rng.normal());
  }
  std::vector<int> own(60);
  for (int i = 0; i < 60; ++i) own[i] = i;
  // One pair per cluster draws the very same resamples.
  const Interval pairs = bootstrap_interval(x, y, pearson);
  const Interval singletons = cluster_bootstrap_interval(x, y, own, pearson);
  CHECK(singletons.lo == pairs.lo);
  CHECK(singletons.hi == pairs.hi);
  // Each pair four times: the pair bootstrap believes in 240 independent pairs and narrows by
  // about half; resampling the copies together gives the 60 pairs' interval back.
  std::vector<double> x4, y4;
  std::vector<int> copies;
  for (int i = 0; i < 60; ++i)
    for (int c = 0; c < 4; ++c) {
      x4.push_back(x[i]);
      y4.push_back(y[i]);
      copies.push_back(i);
    }
  const Interval naive = bootstrap_interval(x4, y4, pearson);
  const Interval clustered = cluster_bootstrap_interval(x4, y4, copies, pearson);
  CHECK(naive.hi - naive.lo < 0.6 * (pairs.hi - pairs.lo));
  CHECK(clustered.hi - clustered.lo == doctest::Approx(pairs.hi - pairs.lo).epsilon(0.15));
  CHECK(std::isnan(cluster_bootstrap_interval(x, y, std::vector<int>(60, 7), pearson).lo));
  CHECK_THROWS_AS(cluster_bootstrap_interval(x, y, {1, 2}, pearson), std::invalid_argument);
}
