#pragma once
// How the reports write a measured number: three significant digits, "—" for a number that is not
// there (NaN: no run measured it).
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace lenlab {

inline std::string number_or_dash(double x) {
  return std::isnan(x) ? "—" : fmt::format("{:.3g}", x);
}

}  // namespace lenlab
