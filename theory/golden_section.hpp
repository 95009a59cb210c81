#pragma once
// Golden-section search: the minimiser of a function that is unimodal on [lo, hi], to an interval
// of width tol. Used to refine the best point of a grid scan (a scan first, because the functions
// minimised here need not be unimodal over their whole range).
#include <cmath>

namespace lenlab {

template <class F>
double golden_section_minimum(const F& f, double lo, double hi, double tol = 1e-12) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  // 200 iterations shrink any interval by 0.618^200 ~ 1e-42: a guard for tol below rounding.
  for (int it = 0; it < 200 && hi - lo > tol; ++it) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - r * (hi - lo), f1 = f(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + r * (hi - lo), f2 = f(x2);
    }
  }
  return f1 <= f2 ? x1 : x2;
}

}  // namespace lenlab
