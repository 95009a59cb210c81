#pragma once
// Fitting an error curve to err(l) ≈ c (l - a)^p: the exponent p says how a model's error grows
// past the training lengths (Theorem 2: p = 2 for length and sum, p = 0 for mean).
//
// Least squares in log space, every usable point weighted alike:
//   min over (c, p[, a]) of Σ_i (log err_i - log c - p log(l_i - a))^2.
// For a given a this is linear least squares in (log c, p). Without a given a, a is found by
// profiling: the residual as a function of δ = min(l) - a is scanned on 400 points log-spaced in
// [1e-6 s, 1e3 s] (s = max(1, max l - min l)) and its best point refined by golden-section search
// in log δ. Log space because the errors span orders of magnitude and a relative misfit at short
// lengths should count as much as one at long lengths.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace lenlab {

struct PowerLawFit {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double c = kNaN, a = kNaN, p = kNaN;
  double rms_log_residual = kNaN;  // sqrt(mean squared log residual) at the fit
  int n_points = 0;                // points used: finite err > 0 and l > a
  bool a_fitted = false;           // a found by the fit (else given)

  bool ok() const { return std::isfinite(p) && std::isfinite(c); }
  double operator()(double l) const { return c * std::pow(l - a, p); }  // the fitted curve
};

// l and err: the same length (std::invalid_argument otherwise). Points with non-finite or
// non-positive err are skipped (an exact zero error has no logarithm), as are l <= a when a is
// given. Returns a fit with ok() false when fewer than 2 (a given) or 3 (a fitted) points remain,
// or when all usable l are equal.
PowerLawFit fit_power_law(const std::vector<double>& l, const std::vector<double>& err,
                          std::optional<double> fixed_a = std::nullopt);

// How a trained model's test error grows past l_train: fit_power_law on the lengths > l_train.
// Length and sum: a fitted too, as Theorem 2's error is (l − Γ*)² with Γ* inside the training
// range. Other tasks (mean): a = l_train fixed, since a nearly flat, noisy curve leaves a
// undetermined (a free fit then returns any exponent at all).
PowerLawFit fit_error_growth(const std::string& task, int l_train, const std::vector<int>& lengths,
                             const std::vector<double>& mse);

}  // namespace lenlab
