#pragma once
// Central finite differences in double, for checking hand-written backward passes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace lenlab::test {

inline std::vector<double> random_vector(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<double> v(n);
  for (double& x : v) x = scale * rng.normal();
  return v;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Compares `analytic` with central differences of loss() with respect to x[i] for every i.
// loss() must read x. The relative error max|a − n| / max|n| is printed and must be <= tol.
template <class Vector, class Loss>
double check_gradient(const std::string& what, Vector& x, const std::vector<double>& analytic,
                      Loss&& loss, double tol = 1e-6, double h = 1e-5) {
  REQUIRE(analytic.size() == x.size());
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * h);
    max_diff = std::max(max_diff, std::abs(numeric - analytic[i]));
    max_ref = std::max(max_ref, std::abs(numeric));
  }
  const double rel = max_diff / std::max(max_ref, 1e-12);
  INFO(what << ": max |analytic - numeric| = " << max_diff << ", max |numeric| = " << max_ref
            << ", relative " << rel);
  CHECK(max_ref > 0);  // a gradient that is identically zero would make the check vacuous
  CHECK(rel <= tol);
  return rel;
}

}  // namespace lenlab::test
