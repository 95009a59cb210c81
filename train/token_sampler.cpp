#include "train/token_sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"

namespace lenlab {

void check_sampling(const Sampling& s) {
  if (!std::isfinite(s.temperature) || s.temperature < 0)
    throw UsageError(fmt::format(
        "--sample-temperature must be a finite number > 0 (0, the default, decodes greedily), "
        "got {}",
        s.temperature));
  if (s.top_k < 0) throw UsageError(fmt::format("--top-k must be >= 0, got {}", s.top_k));
  if (!(s.top_p > 0 && s.top_p <= 1))
    throw UsageError(fmt::format("--top-p must be in (0, 1], got {}", s.top_p));
  if (s.greedy() && (s.top_k > 0 || s.top_p < 1))
    throw UsageError(
        "--top-k and --top-p shape a random draw: give --sample-temperature too (1 = the model's "
        "own distribution), or leave them out for greedy decoding");
}

template <class T>
int sample_token(const T* logits, int V, const Sampling& s, Rng& rng) {
  if (s.greedy()) return static_cast<int>(std::max_element(logits, logits + V) - logits);
  // The softmax at the temperature, in double, likeliest first.
  std::vector<int> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::vector<double> p(V);
  const double top = logits[order[0]];
  double sum = 0;
  for (int i = 0; i < V; ++i) sum += p[i] = std::exp((logits[order[i]] - top) / s.temperature);
  int kept = V;
  if (s.top_k > 0 && s.top_k < V) {
    kept = s.top_k;
    while (kept < V && logits[order[kept]] == logits[order[kept - 1]]) ++kept;  // ties stay
  }
  if (s.top_p < 1) {
    double mass = 0;
    for (int i = 0; i < kept; ++i) {
      mass += p[i] / sum;
      if (mass >= s.top_p) {
        kept = i + 1;
        break;
      }
    }
  }
  const double kept_sum = std::accumulate(p.begin(), p.begin() + kept, 0.0);
  double u = rng.uniform() * kept_sum;
  for (int i = 0; i < kept; ++i) {
    u -= p[i];
    if (u < 0) return order[i];
  }
  return order[kept - 1];
}

template int sample_token<float>(const float*, int, const Sampling&, Rng&);
template int sample_token<double>(const double*, int, const Sampling&, Rng&);

}  // namespace lenlab
