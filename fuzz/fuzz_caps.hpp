#pragma once
// The work caps the fuzz targets share (docs/fuzzing.md): each skips work, never an input, so that
// the fuzzer explores parsing and checking instead of waiting on huge (valid) settings.
#include <algorithm>
#include <cstddef>

#include "train/run_settings.hpp"

namespace lenlab::fuzz {

// A run is not resolved when resolve()'s domain check would evaluate f at more target values.
constexpr double kMaxTargets = 600000;

// How many target values resolve()'s domain check enumerates for this run (an upper bound):
// l_test + 1, or (m + 1)(m + 2) / 2 fractions for mean and mean-uniform, where m = min(l_test,
// 1000) (resolve() checks the mean targets up to length 1000 only: every fraction of a longer
// length lies in [0, 1], which the shorter lengths' targets already cover densely).
inline double target_count(const TrainSpec& spec) {
  const double l = std::max(spec.l_test, 0);
  const double m = std::min(l, 1000.0);
  return spec.task.rfind("mean", 0) == 0 ? (m + 1) * (m + 2) / 2 : l + 1;
}

}  // namespace lenlab::fuzz
