#include "train/representation_stats.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "core/rng.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

double wasserstein1(const std::vector<double>& a, const std::vector<double>& a_weights,
                    const std::vector<double>& b, const std::vector<double>& b_weights) {
  const double wa = std::accumulate(a_weights.begin(), a_weights.end(), 0.0);
  const double wb = std::accumulate(b_weights.begin(), b_weights.end(), 0.0);
  if (a.empty() || b.empty() || !(wa > 0) || !(wb > 0) || a.size() != a_weights.size() ||
      b.size() != b_weights.size())
    throw std::invalid_argument("wasserstein1: two non-empty samples with positive weight needed");
  // The two weighted CDFs walked together over the union of the points: F_a − F_b is constant
  // between consecutive points. Each CDF is summed on its own, in sorted order, so a sample against
  // itself gives exactly 0.
  const auto sorted = [](const std::vector<double>& x, const std::vector<double>& w) {
    std::vector<std::pair<double, double>> v(x.size());
    for (size_t i = 0; i < x.size(); ++i) v[i] = {x[i], w[i]};
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::vector<std::pair<double, double>> sa = sorted(a, a_weights), sb = sorted(b, b_weights);
  size_t i = 0, j = 0;
  double cum_a = 0, cum_b = 0, w1 = 0;
  while (i < sa.size() || j < sb.size()) {
    const double x =
        j == sb.size() || (i < sa.size() && sa[i].first <= sb[j].first) ? sa[i].first : sb[j].first;
    for (; i < sa.size() && sa[i].first == x; ++i) cum_a += sa[i].second;
    for (; j < sb.size() && sb[j].first == x; ++j) cum_b += sb[j].second;
    if (i == sa.size() && j == sb.size()) break;
    const double next =
        j == sb.size() || (i < sa.size() && sa[i].first <= sb[j].first) ? sa[i].first : sb[j].first;
    w1 += std::abs(cum_a / wa - cum_b / wb) * (next - x);
  }
  return w1;
}

namespace {

// A sample's smoothed histogram on [lo, hi]: p_b = (n·f_b + ½) / (n + B/2).
std::vector<double> smoothed_histogram(const std::vector<double>& x, const std::vector<double>& w,
                                       double lo, double hi, int bins) {
  std::vector<double> share(bins, 0.0);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  const double width = (hi - lo) / bins;
  for (size_t i = 0; i < x.size(); ++i) {
    const int b = width > 0 ? std::clamp(static_cast<int>((x[i] - lo) / width), 0, bins - 1) : 0;
    share[b] += w[i] / total;
  }
  const double n = static_cast<double>(x.size());
  for (double& p : share) p = (n * p + 0.5) / (n + 0.5 * bins);
  return share;
}

double kl(const std::vector<double>& p, const std::vector<double>& q) {
  double s = 0;
  for (size_t b = 0; b < p.size(); ++b) s += p[b] * std::log(p[b] / q[b]);
  return std::max(0.0, s);
}

double weighted_std(const std::vector<double>& x, const std::vector<double>& w) {
  double total = 0, mean = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    total += w[i];
    mean += w[i] * x[i];
  }
  mean /= total;
  double var = 0;
  for (size_t i = 0; i < x.size(); ++i) var += w[i] * (x[i] - mean) * (x[i] - mean);
  return std::sqrt(var / total);
}

}  // namespace

HistogramDistances histogram_distances(const std::vector<double>& a,
                                       const std::vector<double>& a_weights,
                                       const std::vector<double>& b,
                                       const std::vector<double>& b_weights, int bins) {
  if (a.empty() || b.empty() || bins < 1)
    throw std::invalid_argument("histogram_distances: two non-empty samples and a bin needed");
  const auto [a_lo, a_hi] = std::minmax_element(a.begin(), a.end());
  const auto [b_lo, b_hi] = std::minmax_element(b.begin(), b.end());
  const double lo = std::min(*a_lo, *b_lo), hi = std::max(*a_hi, *b_hi);
  const std::vector<double> p = smoothed_histogram(a, a_weights, lo, hi, bins);
  const std::vector<double> q = smoothed_histogram(b, b_weights, lo, hi, bins);
  std::vector<double> m(bins);
  for (int i = 0; i < bins; ++i) m[i] = 0.5 * (p[i] + q[i]);
  const double js = (0.5 * kl(p, m) + 0.5 * kl(q, m)) / std::log(2.0);
  HistogramDistances out;
  out.js_distance = std::sqrt(std::clamp(js, 0.0, 1.0));
  out.kl_divergence = kl(p, q);
  return out;
}

RepresentationSample::RepresentationSample(int n_layer, int d_model, int projections)
    : n_layer_(n_layer),
      d_(d_model),
      P_(projections),
      directions_(static_cast<size_t>(projections) * d_model),
      projected_(n_layer, std::vector<double>()),
      weights_(n_layer) {
  if (n_layer < 1 || d_model < 1 || projections < 1 || projections > kMaxRepresentationProjections)
    throw std::invalid_argument(
        fmt::format("RepresentationSample: {} layers, width {}, {} projections (1..{})", n_layer,
                    d_model, projections, kMaxRepresentationProjections));
  // Direction p is the same for every P ≥ p + 1: one stream per direction.
  for (int p = 0; p < P_; ++p) {
    Rng rng = Rng::stream(kRepresentationSeed ^ static_cast<uint64_t>(d_model), p);
    double norm = 0;
    double* u = directions_.data() + static_cast<size_t>(p) * d_;
    for (int i = 0; i < d_; ++i) {
      u[i] = rng.normal();
      norm += u[i] * u[i];
    }
    for (int i = 0; i < d_; ++i) u[i] /= std::sqrt(norm);
  }
}

template <class T>
void RepresentationSample::add(int l, const T* A, const std::vector<int>& rows, double weight) {
  if (rows.empty()) return;
  const int n = static_cast<int>(rows.size());
  Eigen::MatrixXd X(d_, n);  // column r: row rows[r] of A
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < d_; ++i)
      X(i, r) = static_cast<double>(A[static_cast<size_t>(rows[r]) * d_ + i]);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> U(
      directions_.data(), P_, d_);
  const Eigen::MatrixXd Y = U * X;  // [P, n]
  const size_t old = weights_[l].size(), total = old + n;
  // Direction-major [P][rows]: re-lay the existing rows for the new count.
  std::vector<double> grown(static_cast<size_t>(P_) * total);
  for (int p = 0; p < P_; ++p) {
    std::copy_n(projected_[l].begin() + p * old, old, grown.begin() + p * total);
    for (int r = 0; r < n; ++r) grown[p * total + old + r] = Y(p, r);
  }
  projected_[l] = std::move(grown);
  weights_[l].insert(weights_[l].end(), n, weight);
}

std::vector<RepresentationDistance> RepresentationSample::distance_to(
    const RepresentationSample& reference) const {
  if (reference.n_layer_ != n_layer_ || reference.d_ != d_ || reference.P_ != P_)
    throw std::invalid_argument("RepresentationSample: a reference of another shape");
  std::vector<RepresentationDistance> out;
  for (int l = 0; l < n_layer_; ++l) {
    RepresentationDistance r;
    r.layer = l;
    r.rows = rows(l);
    r.reference_rows = reference.rows(l);
    if (r.rows == 0 || r.reference_rows == 0) continue;  // nothing measured at this layer
    std::vector<double> a(r.rows), b(r.reference_rows);
    for (int p = 0; p < P_; ++p) {
      std::copy_n(projected_[l].begin() + static_cast<size_t>(p) * r.rows, r.rows, a.begin());
      std::copy_n(reference.projected_[l].begin() + static_cast<size_t>(p) * r.reference_rows,
                  r.reference_rows, b.begin());
      r.sliced_w1 += wasserstein1(a, weights_[l], b, reference.weights_[l]);
      const HistogramDistances h =
          histogram_distances(a, weights_[l], b, reference.weights_[l], kRepresentationBins);
      r.js_distance += h.js_distance;
      r.kl_divergence += h.kl_divergence;
      r.reference_std += weighted_std(b, reference.weights_[l]);
    }
    r.sliced_w1 /= P_;
    r.js_distance /= P_;
    r.kl_divergence /= P_;
    r.reference_std /= P_;
    out.push_back(r);
  }
  return out;
}

template void RepresentationSample::add(int, const float*, const std::vector<int>&, double);
template void RepresentationSample::add(int, const double*, const std::vector<int>&, double);

}  // namespace lenlab
