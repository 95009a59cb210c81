#pragma once
// What a scalar task computes (the first four rows of the table of tasks, tasks/task.cpp): the
// target y of a sequence of l bits with k ones, every value it takes over a range of lengths, and
// how its bits are drawn. Each is a ScalarTaskMath in tasks/scalar_tasks.cpp.
#include <vector>

namespace lenlab {

struct ScalarTaskMath {
  double (*target)(int length, int n_ones) = nullptr;
  // Every value of the target over lengths l_min..l_max, sorted ascending, unique.
  std::vector<double> (*target_values)(int l_min, int l_max) = nullptr;
  // #ones uniform in 0..l, at uniformly random positions (mean-uniform, paper App. F); otherwise
  // independent fair bits.
  bool uniform_count = false;
  // Its targets are fractions k/l in [0, 1] (the mean tasks): their number grows as l², and past
  // a few hundred lengths the shorter ones already cover [0, 1] densely.
  bool fractions = false;
};

}  // namespace lenlab
