#include "train/untrained_bias.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <limits>

#include "core/error.hpp"

namespace lenlab {

double untrained_pair_fraction(const Batch& b, const ops::AttentionWindow& w,
                               const std::vector<uint8_t>& untrained) {
  if (untrained.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<uint8_t> answer(b.n_tokens(), 0);
  for (const int r : b.read_rows) answer[r] = 1;
  for (int r = 0; r < b.token.size(); ++r)
    if (b.token.labels[r] >= 0) answer[b.token.rows[r]] = 1;
  const int last = static_cast<int>(untrained.size()) - 1;
  size_t pairs = 0, hits = 0;
  for (int s = 0; s < b.n_seq(); ++s) {
    const int first = b.offsets[s];
    for (int i = first; i < b.offsets[s + 1]; ++i) {
      if (!answer[i]) continue;
      for (int j = first; j <= i; ++j) {
        if (!w.admits(i - first, j - first)) continue;
        const int d = std::min(w.capped(b.positions[i] - b.positions[j]), last);
        ++pairs;
        hits += untrained[d];
      }
    }
  }
  return pairs == 0 ? std::numeric_limits<double>::quiet_NaN()
                    : static_cast<double>(hits) / static_cast<double>(pairs);
}

int trained_distance_cap(const std::vector<uint8_t>& untrained) {
  const auto first = std::find(untrained.begin(), untrained.end(), uint8_t{1});
  if (first == untrained.end()) return 0;
  const int u = static_cast<int>(first - untrained.begin());
  if (u <= 1)
    throw UsageError(fmt::format(
        "--distance-cap trained: the model's bias at distance {} was never trained (still its "
        "initial 0 in every head), so there is no trained distance >= 1 to map the far ones "
        "onto; give --distance-cap train or a number",
        u));
  return u - 1;
}

}  // namespace lenlab
