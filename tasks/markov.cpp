// The random Markov chain of the `markov` token task: Dirichlet draws, sampling, exact entropies.
#include "tasks/markov.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

constexpr double kProbabilityFloor = 1e-12;

// log of a Gamma(shape, 1) variate, shape >= 1 (Marsaglia and Tsang 2000): d = shape − 1/3,
// c = 1/√(9d); draw x ~ N(0, 1), v = (1 + c·x)^3 until v > 0 and u < 1 − 0.0331·x^4 (the fast
// squeeze) or log u < x²/2 + d·(1 − v + log v); the variate is d·v.
double log_gamma_variate_ge1(double shape, Rng& rng) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = rng.normal();
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = rng.uniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) {
      return std::log(d) + std::log(v);
    }
  }
}

// log of a Gamma(shape, 1) variate for any shape > 0. For shape < 1 the standard boost:
// Gamma(shape) = Gamma(shape + 1) · U^(1/shape) with U uniform on (0, 1], taken in logs so that
// tiny shapes (whose variates underflow a double) still give a usable Dirichlet draw.
double log_gamma_variate(double shape, Rng& rng) {
  if (!(shape > 0.0) || !std::isfinite(shape)) {
    throw std::invalid_argument("Gamma variate: the shape must be finite and > 0");
  }
  if (shape >= 1.0) return log_gamma_variate_ge1(shape, rng);
  const double g = log_gamma_variate_ge1(shape + 1.0, rng);
  const double u = 1.0 - rng.uniform();  // (0, 1]
  return g + std::log(u) / shape;
}

std::string format_double(double x) {
  return fmt::format("{}", x);
}

}  // namespace

void check_markov_settings(int n_symbols, int order, double concentration) {
  if (n_symbols < 2 || n_symbols > 4096) {
    throw UsageError(fmt::format("--n-symbols (n_symbols) must be in 2..4096, got {}", n_symbols));
  }
  if (order < 1) {
    throw UsageError(fmt::format("--markov-order (markov_order) must be >= 1, got {}", order));
  }
  int64_t contexts = 1;
  for (int i = 0; i < order && contexts <= kMaxMarkovContexts; ++i) contexts *= n_symbols;
  if (contexts > kMaxMarkovContexts) {
    throw UsageError(fmt::format(
        "--n-symbols (n_symbols) {} with --markov-order (markov_order) {} gives {}^{} contexts, "
        "more than the chain's state table allows (n_symbols^markov_order must be <= {})",
        n_symbols, order, n_symbols, order, kMaxMarkovContexts));
  }
  if (!std::isfinite(concentration) || concentration <= 0.0) {
    throw UsageError(fmt::format(
        "--markov-concentration (markov_concentration) must be a finite number > 0, got {}",
        format_double(concentration)));
  }
}

double sample_gamma(double shape, Rng& rng) {
  return std::exp(log_gamma_variate(shape, rng));
}

std::vector<double> sample_dirichlet(int n, double alpha, Rng& rng) {
  std::vector<double> p(n);
  double max_log = -INFINITY;
  for (int i = 0; i < n; ++i) {
    p[i] = log_gamma_variate(alpha, rng);
    max_log = std::max(max_log, p[i]);
  }
  // Normalize in logs: the largest variate becomes exp(0) = 1, so the sum is >= 1 and never 0.
  double sum = 0.0;
  for (double& x : p) {
    x = std::exp(x - max_log);
    sum += x;
  }
  for (double& x : p) x /= sum;
  return p;
}

MarkovChain::MarkovChain(int n_symbols, int order, double concentration, uint64_t seed)
    : n_symbols_(n_symbols), order_(order), n_contexts_(1) {
  check_markov_settings(n_symbols, order, concentration);
  for (int i = 0; i < order; ++i) n_contexts_ *= n_symbols;
  table_.resize(static_cast<size_t>(n_contexts_) * n_symbols);
  context_entropy_.resize(n_contexts_);
  Rng rng(seed);
  for (int64_t c = 0; c < n_contexts_; ++c) {
    std::vector<double> p = sample_dirichlet(n_symbols, concentration, rng);
    double sum = 0.0;
    for (double& x : p) {
      x = std::max(x, kProbabilityFloor);
      sum += x;
    }
    double h = 0.0;
    double* row = table_.data() + c * n_symbols;
    for (int i = 0; i < n_symbols; ++i) {
      row[i] = p[i] / sum;
      h -= row[i] * std::log(row[i]);
    }
    context_entropy_[c] = h;
  }
}

int64_t MarkovChain::context_index(const int32_t* last_tokens) const {
  int64_t index = 0;
  for (int i = 0; i < order_; ++i) index = index * n_symbols_ + last_tokens[i];
  return index;
}

int MarkovChain::sample_next(const int32_t* context, Rng& rng) const {
  const double* p = probs(context_index(context));
  const double u = rng.uniform();
  double cumulative = 0.0;
  for (int i = 0; i < n_symbols_ - 1; ++i) {
    cumulative += p[i];
    if (u < cumulative) return i;
  }
  return n_symbols_ - 1;  // also catches u past a cumulative sum rounded below 1
}

double MarkovChain::log_prob(const int32_t* symbols, int t) const {
  for (int i = std::max(t - order_, 0); i <= t; ++i)
    if (symbols[i] < 0 || symbols[i] >= n_symbols_)
      throw std::out_of_range(fmt::format("MarkovChain::log_prob: symbol {} is not in 0..{}",
                                          symbols[i], n_symbols_ - 1));
  if (t < order_) return -std::log(static_cast<double>(n_symbols_));
  return std::log(probs(context_index(symbols + t - order_))[symbols[t]]);
}

void MarkovChain::append_sample(std::vector<int32_t>& tokens, int length, Rng& rng) const {
  for (int i = 1; i <= length; ++i) {
    tokens.push_back(i <= order_ ? static_cast<int32_t>(rng.uniform_int(0, n_symbols_ - 1))
                                 : sample_next(&tokens[tokens.size() - order_], rng));
  }
}

void MarkovChain::propagate(const std::vector<double>& current, std::vector<double>& next) const {
  // Context c = (x_{t−order} .. x_{t−1}) followed by x becomes (x_{t−order+1} .. x_{t−1}, x):
  // drop the most significant digit, append x.
  const int64_t stride = n_contexts_ / n_symbols_;
  std::fill(next.begin(), next.end(), 0.0);
  for (int64_t c = 0; c < n_contexts_; ++c) {
    const double pc = current[c];
    if (pc == 0.0) continue;
    const double* p = probs(c);
    double* out = next.data() + (c % stride) * n_symbols_;
    for (int x = 0; x < n_symbols_; ++x) out[x] += pc * p[x];
  }
}

double MarkovChain::mean_entropy(const std::vector<double>& p) const {
  double h = 0.0;
  for (int64_t c = 0; c < n_contexts_; ++c) h += p[c] * context_entropy_[c];
  return h;
}

std::vector<double> MarkovChain::position_entropy(int length) const {
  std::vector<double> h(std::max(length, 0));
  const double uniform_entropy = std::log(static_cast<double>(n_symbols_));
  for (int t = 1; t <= std::min(length, order_); ++t) h[t - 1] = uniform_entropy;
  if (length <= order_) return h;
  // The context at t = order + 1 is x_1..x_order: uniform over every context.
  std::vector<double> p(n_contexts_, 1.0 / static_cast<double>(n_contexts_)), next(n_contexts_);
  for (int t = order_ + 1; t <= length; ++t) {
    h[t - 1] = mean_entropy(p);
    if (t < length) {
      propagate(p, next);
      p.swap(next);
    }
  }
  return h;
}

double MarkovChain::entropy_rate() const {
  std::vector<double> p(n_contexts_, 1.0 / static_cast<double>(n_contexts_)), next(n_contexts_);
  for (int step = 0; step < 100000; ++step) {
    propagate(p, next);
    double change = 0.0;
    for (int64_t c = 0; c < n_contexts_; ++c) change += std::fabs(next[c] - p[c]);
    p.swap(next);
    if (change < 1e-13) break;
  }
  return mean_entropy(p);
}

}  // namespace lenlab
