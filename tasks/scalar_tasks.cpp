// The scalar tasks' targets (tasks/task.hpp has their definitions).
#include "tasks/scalar_tasks.hpp"

#include <algorithm>

namespace lenlab::tasks {
namespace {

double mean(int length, int n_ones) {
  return static_cast<double>(n_ones) / static_cast<double>(length);
}

// All fractions k/l: O(l_max^2) values before deduplication. Division is correctly rounded, so
// equal fractions (1/3, 2/6) give bit-identical doubles and std::unique merges them.
std::vector<double> mean_values(int l_min, int l_max) {
  std::vector<double> values;
  for (int l = l_min; l <= l_max; ++l)
    for (int k = 0; k <= l; ++k) values.push_back(mean(l, k));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

extern const ScalarTaskMath kMean{.target = mean, .target_values = mean_values, .fractions = true};
extern const ScalarTaskMath kMeanUniform{
    .target = mean, .target_values = mean_values, .uniform_count = true, .fractions = true};
extern const ScalarTaskMath kLength{
    .target = [](int length, int) { return static_cast<double>(length); },
    .target_values =
        [](int l_min, int l_max) {
          std::vector<double> values;
          for (int l = l_min; l <= l_max; ++l) values.push_back(l);
          return values;
        },
};
// n_ones runs over 0..l for every l, so the values are 0..l_max.
extern const ScalarTaskMath kSum{
    .target = [](int, int n_ones) { return static_cast<double>(n_ones); },
    .target_values =
        [](int, int l_max) {
          std::vector<double> values;
          for (int k = 0; k <= l_max; ++k) values.push_back(k);
          return values;
        },
};

}  // namespace lenlab::tasks
