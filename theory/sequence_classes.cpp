// Exact class probabilities (number of ones, last bit) of each task's sequences.
#include "theory/sequence_classes.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace lenlab {
namespace {

// C(n, k) / 2^(n+1): the probability of one particular last bit and k ones among the other n
// fair bits.
double binomial_half(int n, int k) {
  const double log_c = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
  return std::exp(log_c - (n + 1.0) * std::log(2.0));
}

}  // namespace

std::vector<SequenceClass> sequence_classes(TaskKind task, int length) {
  if (length < 1)
    throw std::invalid_argument(fmt::format("sequence_classes: length {} < 1", length));
  const int l = length;
  std::vector<SequenceClass> classes;
  classes.reserve(2 * static_cast<size_t>(l));
  for (int n = 0; n <= l; ++n) {
    for (int last = 0; last <= 1; ++last) {
      if ((last == 1 && n == 0) || (last == 0 && n == l)) continue;  // impossible
      double p = 0;
      if (task == TaskKind::kMeanUniform) {
        // P(n) = 1/(l+1); the last place holds a one with probability n/l.
        const double p_last_one = static_cast<double>(n) / l;
        p = (last == 1 ? p_last_one : 1.0 - p_last_one) / (l + 1.0);
      } else {
        p = binomial_half(l - 1, last == 1 ? n - 1 : n);
      }
      classes.push_back({l, n, last, p});
    }
  }
  return classes;
}

}  // namespace lenlab
