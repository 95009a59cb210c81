#pragma once
// 1-based ranks of values, ties sharing their average rank (mid-ranks): Spearman's correlation
// (results/correlation.cpp) and the signed-rank test (stats/paired_test.cpp). A mid-rank is a
// multiple of 1/2, so twice it is an exact integer.
#include <algorithm>
#include <numeric>
#include <vector>

namespace lenlab {

inline std::vector<double> midranks(const std::vector<double>& v) {
  const size_t n = v.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && v[idx[j]] == v[idx[i]]) ++j;
    const double average = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) r[idx[k]] = average;
    i = j;
  }
  return r;
}

}  // namespace lenlab
