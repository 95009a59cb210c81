#pragma once
// A random Markov chain of a given order over n content symbols: the `markov` token task's source
// (tasks/token_tasks.hpp), and the exact entropy a perfect model reaches at each position.
//
// The chain is a pure function of (n_symbols, order, concentration, seed): one transition
// distribution P(· | c) per context c = (x_{t−order} .. x_{t−1}), each drawn from a symmetric
// Dirichlet(concentration) with Rng(seed), every probability floored at 1e-12 and renormalized (so
// no transition is impossible and cross-entropy stays finite). A sequence starts with `order` iid
// uniform symbols; every later symbol is drawn from P(· | the `order` symbols before it).
#include <cstdint>
#include <vector>

#include "core/rng.hpp"

namespace lenlab {

// The chain's limits: n_symbols in 2..4096, order >= 1, n_symbols^order <= 65536 contexts (the
// transition table holds n_symbols^(order+1) doubles, at most 2^24 = 128 MiB), concentration
// finite and > 0. Throws UsageError naming the flag and config key (--n-symbols (n_symbols),
// --markov-order (markov_order), --markov-concentration (markov_concentration)) and the value.
void check_markov_settings(int n_symbols, int order, double concentration);
inline constexpr int64_t kMaxMarkovContexts = 65536;

// A Gamma(shape, 1) variate (Marsaglia and Tsang 2000; for shape < 1 the boost
// Gamma(shape + 1) · U^(1/shape)). std::invalid_argument unless shape is finite and > 0.
double sample_gamma(double shape, Rng& rng);
// A draw from the symmetric Dirichlet(alpha) on n components: Gamma(alpha) variates normalized in
// logs, so tiny alphas whose variates underflow a double still give a distribution (summing to 1).
// No floor is applied here. std::invalid_argument unless alpha is finite and > 0.
std::vector<double> sample_dirichlet(int n, double alpha, Rng& rng);

class MarkovChain {
 public:
  // Throws UsageError as check_markov_settings does.
  MarkovChain(int n_symbols, int order, double concentration, uint64_t seed);

  int n_symbols() const { return n_symbols_; }
  int order() const { return order_; }
  int64_t n_contexts() const { return n_contexts_; }

  // The index of the context made of `order` tokens, oldest first (the oldest is the most
  // significant digit in base n_symbols): 0 .. n_contexts() − 1.
  int64_t context_index(const int32_t* last_tokens) const;
  // P(· | context): n_symbols probabilities summing to 1, each > 0.
  const double* probs(int64_t context_index) const {
    return table_.data() + context_index * n_symbols_;
  }
  // A draw of the next symbol after `context` (the last `order` tokens, oldest first); one
  // rng.uniform() per call.
  int sample_next(const int32_t* context, Rng& rng) const;
  // log P(x_t | x_1..x_{t−1}) of symbol t (0-based) of a sequence `symbols` drawn as
  // append_sample draws it: −log(n_symbols) for t < order, else the log transition probability
  // from the `order` symbols before it. std::out_of_range on a symbol outside 0..n_symbols − 1.
  double log_prob(const int32_t* symbols, int t) const;
  // Appends a sequence of `length` symbols to `tokens`: the first `order` iid uniform (one
  // rng.uniform_int each), every later one by sample_next on the `order` before it.
  void append_sample(std::vector<int32_t>& tokens, int length, Rng& rng) const;

  // H_t for t = 1..length (element t − 1), in nats: the exact conditional entropy of x_t given
  // x_1..x_{t−1}, i.e. the expected cross-entropy of a perfect model at position t. log(n_symbols)
  // for t <= order; for t > order Σ_c P_t(c)·H(P(·|c)), with P_t the exact distribution of the
  // context at time t, propagated forward from the uniform start (O(length · n_symbols^(order+1))).
  std::vector<double> position_entropy(int length) const;
  // lim_{t→∞} H_t: the context distribution propagated until one step changes it by less than
  // 1e-13 (L1), at most 100000 steps (all transitions are positive, so it converges).
  double entropy_rate() const;

 private:
  // One step of the context distribution: next[c'] = Σ P_t(c)·P(x|c) over the (c, x) giving c'.
  void propagate(const std::vector<double>& current, std::vector<double>& next) const;
  // Σ_c p[c]·H(P(·|c)).
  double mean_entropy(const std::vector<double>& p) const;

  int n_symbols_;
  int order_;
  int64_t n_contexts_;
  std::vector<double> table_;            // [n_contexts, n_symbols]
  std::vector<double> context_entropy_;  // [n_contexts] H(P(·|c)) in nats
};

}  // namespace lenlab
