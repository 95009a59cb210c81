#pragma once
// A metric's mean over the test lengths within the training range (length <= l_train) and over
// those beyond it: the headline of a run's manifest and of report.md's tables. Summed in the
// order given, so that every caller gets the same double.
#include <vector>

namespace lenlab {

struct RangeMeans {
  double within_sum = 0, beyond_sum = 0;
  int n_within = 0, n_beyond = 0;
  // The means; `none` where a range has no length.
  double within(double none) const { return n_within ? within_sum / n_within : none; }
  double beyond(double none) const { return n_beyond ? beyond_sum / n_beyond : none; }
};

// lengths[i] and values[i] belong together (Length: int or double).
template <class Length>
RangeMeans range_means(const std::vector<Length>& lengths, const std::vector<double>& values,
                       int l_train) {
  RangeMeans m;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] <= l_train) {
      m.within_sum += values[i];
      ++m.n_within;
    } else {
      m.beyond_sum += values[i];
      ++m.n_beyond;
    }
  }
  return m;
}

}  // namespace lenlab
