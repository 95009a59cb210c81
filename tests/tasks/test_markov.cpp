// Tests for tasks/markov: the Dirichlet sampler's moments, the chain's table, and its exact
// per-position entropies against brute-force enumeration and Monte Carlo.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "tasks/markov.hpp"
#include "tasks/token_tasks.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab {
namespace {

using lenlab::test::contains;
using lenlab::test::usage_message;

struct Moments {
  double mean, var, se_mean, se_var;
};

// Sample mean and variance of xs with their standard errors (the variance's from the fourth
// central moment).
Moments moments(const std::vector<double>& xs) {
  const double n = static_cast<double>(xs.size());
  double mean = 0.0;
  for (const double x : xs) mean += x;
  mean /= n;
  double m2 = 0.0, m4 = 0.0;
  for (const double x : xs) {
    const double d2 = (x - mean) * (x - mean);
    m2 += d2;
    m4 += d2 * d2;
  }
  m2 /= n;
  m4 /= n;
  return {mean, m2, std::sqrt(m2 / n), std::sqrt((m4 - m2 * m2) / n)};
}

// H(x_t | x_1..x_{t−1}) by summing over every prefix x_1..x_{t−1} with its probability.
double brute_force_entropy(const MarkovChain& chain, int t) {
  const int n = chain.n_symbols(), order = chain.order();
  int64_t prefixes = 1;
  for (int i = 1; i < t; ++i) prefixes *= n;
  std::vector<int32_t> x(t);  // x[i] = x_{i+1}
  double h = 0.0;
  for (int64_t code = 0; code < prefixes; ++code) {
    int64_t rest = code;
    for (int i = 0; i < t - 1; ++i) {
      x[i] = static_cast<int32_t>(rest % n);
      rest /= n;
    }
    double p = 1.0;
    for (int i = 0; i < t - 1; ++i) {  // P(x_{i+1} | x_1..x_i)
      p *= i < order ? 1.0 / n : chain.probs(chain.context_index(&x[i - order]))[x[i]];
    }
    double h_next = 0.0;
    if (t - 1 < order) {
      h_next = std::log(static_cast<double>(n));
    } else {
      const double* q = chain.probs(chain.context_index(&x[t - 1 - order]));
      for (int s = 0; s < n; ++s) h_next -= q[s] * std::log(q[s]);
    }
    h += p * h_next;
  }
  return h;
}

}  // namespace

TEST_CASE("gamma and Dirichlet samplers have the right moments") {
  for (const double shape : {0.3, 1.0, 3.0}) {
    CAPTURE(shape);
    Rng rng(17);
    std::vector<double> g(200000);
    for (double& x : g) x = sample_gamma(shape, rng);
    const Moments m = moments(g);
    CHECK(std::fabs(m.mean - shape) < 5 * m.se_mean);
    CHECK(std::fabs(m.var - shape) < 5 * m.se_var);
  }
  const int n = 4;
  for (const double alpha : {0.5, 2.0}) {
    CAPTURE(alpha);
    Rng rng(23);
    std::vector<double> first(200000), last(first.size());
    bool all_valid = true;  // every draw is a distribution
    for (size_t i = 0; i < first.size(); ++i) {
      const std::vector<double> p = sample_dirichlet(n, alpha, rng);
      REQUIRE(p.size() == static_cast<size_t>(n));
      double sum = 0.0;
      for (const double x : p) {
        all_valid = all_valid && x >= 0.0;
        sum += x;
      }
      all_valid = all_valid && std::fabs(sum - 1.0) < 1e-12;
      first[i] = p[0];
      last[i] = p[n - 1];
    }
    CHECK(all_valid);
    const double mean = 1.0 / n;
    const double var = mean * (1.0 - mean) / (n * alpha + 1.0);
    for (const auto& xs : {first, last}) {
      const Moments m = moments(xs);
      CHECK(std::fabs(m.mean - mean) < 5 * m.se_mean);
      CHECK(std::fabs(m.var - var) < 5 * m.se_var);
    }
  }
  Rng bad(1);
  CHECK_THROWS_AS(sample_gamma(0.0, bad), std::invalid_argument);
  CHECK_THROWS_AS(sample_dirichlet(3, -1.0, bad), std::invalid_argument);
  // Tiny concentrations underflow every Gamma variate; the draw is still a distribution.
  Rng rng(5);
  const std::vector<double> p = sample_dirichlet(8, 1e-4, rng);
  double sum = 0.0;
  for (const double x : p) sum += x;
  CHECK(std::fabs(sum - 1.0) < 1e-12);
}

TEST_CASE("Markov chain table: distributions, floor, context index, seeding") {
  for (const double alpha : {0.01, 0.5, 3.0}) {
    const MarkovChain chain(5, 2, alpha, 7);
    CHECK(chain.n_contexts() == 25);
    for (int64_t c = 0; c < chain.n_contexts(); ++c) {
      double sum = 0.0;
      for (int s = 0; s < 5; ++s) {
        CHECK(chain.probs(c)[s] >= 0.99e-12);
        sum += chain.probs(c)[s];
      }
      CHECK(std::fabs(sum - 1.0) < 1e-12);
    }
  }
  const MarkovChain a(3, 2, 0.5, 1), b(3, 2, 0.5, 1), c(3, 2, 0.5, 2);
  const int32_t ctx[2] = {2, 1};  // oldest first: 2·3 + 1
  CHECK(a.context_index(ctx) == 7);
  bool differs = false;
  for (int64_t k = 0; k < 9; ++k)
    for (int s = 0; s < 3; ++s) {
      CHECK(a.probs(k)[s] == b.probs(k)[s]);
      differs = differs || a.probs(k)[s] != c.probs(k)[s];
    }
  CHECK(differs);
  // sample_next draws from probs(context).
  Rng rng(3);
  std::vector<int> counts(3, 0);
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) ++counts[a.sample_next(ctx, rng)];
  for (int s = 0; s < 3; ++s) {
    const double p = a.probs(7)[s];
    CHECK(std::fabs(counts[s] / double(draws) - p) < 5 * std::sqrt(p * (1 - p) / draws) + 1e-9);
  }
  CHECK(contains(usage_message([] { MarkovChain(3, 0, 0.5, 1); }), "--markov-order"));
  CHECK(contains(usage_message([] { MarkovChain(3, 1, -1.0, 1); }), "got -1"));
}

TEST_CASE("Markov position_entropy equals brute-force enumeration") {
  for (const int order : {1, 2}) {
    for (const double alpha : {0.3, 0.5, 2.0}) {
      CAPTURE(order);
      CAPTURE(alpha);
      const MarkovChain chain(3, order, alpha, 11);
      const std::vector<double> h = chain.position_entropy(6);
      REQUIRE(h.size() == 6);
      for (int t = 1; t <= 6; ++t) {
        CAPTURE(t);
        CHECK(std::fabs(h[t - 1] - brute_force_entropy(chain, t)) < 1e-12);
      }
      for (int t = 1; t <= order; ++t) CHECK(h[t - 1] == std::log(3.0));
      CHECK(h[order] < std::log(3.0));  // the chain is not uniform
      // A prefix of the profile is the shorter profile.
      const std::vector<double> h3 = chain.position_entropy(3);
      CHECK(std::vector<double>(h.begin(), h.begin() + 3) == h3);
    }
  }
  CHECK(MarkovChain(3, 1, 0.5, 1).position_entropy(0).empty());
}

TEST_CASE("Markov position_entropy agrees with a Monte-Carlo estimate over sampled sequences") {
  TokenTaskSettings s;
  s.n_symbols = 4;
  s.markov_order = 2;
  s.markov_concentration = 0.5;
  const MarkovChain chain(4, 2, 0.5, 3);
  const int length = 10;
  const Batch b = token_eval_batch(TaskKind::kMarkov, s, &chain, length, 20000, 9);
  const std::vector<double> h = chain.position_entropy(length);
  for (const int t : {1, 3, 4, 6, 10}) {
    CAPTURE(t);
    std::vector<double> nll;
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const int32_t* x = b.tokens.data() + b.offsets[sq];  // x[t] = x_t
      const double p = t <= 2 ? 0.25 : chain.probs(chain.context_index(x + t - 2))[x[t]];
      nll.push_back(-std::log(p));
      // log_prob reads the same symbol from the sequence x_1.. (0-based t − 1).
      if (sq < 50) CHECK(chain.log_prob(x + 1, t - 1) == std::log(p));
    }
    const Moments m = moments(nll);
    CHECK(std::fabs(m.mean - h[t - 1]) <= 5 * m.se_mean + 1e-12);
  }
  // A symbol outside the chain's alphabet is a bug in the caller, said so.
  const int32_t bad[3] = {0, 4, 1};
  CHECK_THROWS_AS(chain.log_prob(bad, 2), std::out_of_range);
  CHECK(chain.log_prob(bad, 0) == std::log(0.25));  // uniform: nothing before it is read
}

TEST_CASE("Markov entropy_rate is the limit of position_entropy") {
  for (const auto& setting : {std::pair{3, 2}, std::pair{5, 1}, std::pair{4, 3}}) {
    const int n = setting.first, order = setting.second;
    CAPTURE(n);
    CAPTURE(order);
    const MarkovChain chain(n, order, 0.5, 21);
    const std::vector<double> h = chain.position_entropy(3000);
    CHECK(std::fabs(chain.entropy_rate() - h.back()) < 1e-9);
    CHECK(chain.entropy_rate() < std::log(static_cast<double>(n)));
  }
}

}  // namespace lenlab
