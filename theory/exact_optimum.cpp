// Exact optima of eq. 8: weighted least squares (free P) and variable projection (rank-one P).
#include "theory/exact_optimum.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "theory/golden_section.hpp"
#include "theory/linear_attention.hpp"

namespace lenlab {
namespace {

// Minimum-norm solution of min_x || diag(sqrt w) (A x - z) ||^2.
Eigen::VectorXd weighted_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& w,
                                       const Eigen::VectorXd& z) {
  const Eigen::VectorXd sw = w.cwiseSqrt();
  const Eigen::MatrixXd aw = sw.asDiagonal() * a;
  const Eigen::VectorXd zw = sw.cwiseProduct(z);
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(aw);
  // A relative threshold: columns that are exact copies (BOS and EOS) must count as dependent.
  cod.setThreshold(1e-12);
  return cod.solve(zw);
}

// For P = q κ^T with q = (cos θ, sin θ): every design row uses one query row t, so its features
// on κ are q_t times that row's block of columns. Rows of different t never share a block, hence
// X_κ^T W X_κ = Σ_t q_t^2 G_t and X_κ^T W z = Σ_t q_t h_t with per-row-type Gram matrices; the
// scan over θ then costs |K|^3 per point whatever l_train is.
class RankOneProfile {
 public:
  explicit RankOneProfile(const TrainingObjective& o) : n_keys_(o.n_key_types()) {
    const Eigen::VectorXd& w = o.weights();
    const Eigen::VectorXd& z = o.targets();
    for (int t = 0; t < 2; ++t) {
      gram_[t] = Eigen::MatrixXd::Zero(n_keys_, n_keys_);
      cross_[t] = Eigen::VectorXd::Zero(n_keys_);
    }
    for (Eigen::Index r = 0; r < o.design().rows(); ++r) {
      const int t = o.query_rows()[r];
      const Eigen::VectorXd x = o.design().row(r).segment(t * n_keys_, n_keys_).transpose();
      gram_[t] += w(r) * x * x.transpose();
      cross_[t] += w(r) * z(r) * x;
    }
    target_power_ = w.dot(z.cwiseProduct(z));
  }

  // The loss at direction θ with the best κ: E z^2 - h^T G^+ h.
  double loss(double theta) const {
    const double c = std::cos(theta), s = std::sin(theta);
    const Eigen::MatrixXd g = c * c * gram_[0] + s * s * gram_[1];
    const Eigen::VectorXd h = c * cross_[0] + s * cross_[1];
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(g);
    cod.setThreshold(1e-12);
    return target_power_ - h.dot(cod.solve(h));
  }

 private:
  int n_keys_;
  Eigen::MatrixXd gram_[2];
  Eigen::VectorXd cross_[2];
  double target_power_ = 0;
};

// P = q κ^T with q = (cos θ, sin θ) and the least-squares κ, solved on the weighted design
// (better conditioned than the Gram matrices).
Eigen::MatrixXd rank_one_at(const TrainingObjective& o, double theta) {
  const double q[2] = {std::cos(theta), std::sin(theta)};
  const int n_keys = o.n_key_types();
  Eigen::MatrixXd a(o.design().rows(), n_keys);
  for (Eigen::Index r = 0; r < a.rows(); ++r) {
    const int t = o.query_rows()[r];
    a.row(r) = q[t] * o.design().row(r).segment(t * n_keys, n_keys);
  }
  const Eigen::RowVectorXd kappa = weighted_least_squares(a, o.weights(), o.targets()).transpose();
  // Row by row rather than as an outer product with a fixed-size q, which trips GCC 12's
  // -Warray-bounds inside Eigen's AVX-512 kernels.
  Eigen::MatrixXd products(2, n_keys);
  products.row(0) = q[0] * kappa;
  products.row(1) = q[1] * kappa;
  return products;
}

AttentionOptimum make_optimum(const TrainingObjective& o, Eigen::MatrixXd products) {
  AttentionOptimum opt;
  opt.train_loss = o.loss(products);
  opt.rank = numerical_rank(products);
  opt.products = std::move(products);
  return opt;
}

}  // namespace

int numerical_rank(const Eigen::MatrixXd& m, double rel_tol) {
  if (m.size() == 0) return 0;
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
  if (sv(0) == 0) return 0;
  int rank = 0;
  for (Eigen::Index i = 0; i < sv.size(); ++i) rank += sv(i) > rel_tol * sv(0) ? 1 : 0;
  return rank;
}

AttentionOptimum solve_free_products(const TrainingObjective& o) {
  const Eigen::VectorXd flat = weighted_least_squares(o.design(), o.weights(), o.targets());
  return make_optimum(o, unflatten_products(flat, o.n_query_types(), o.n_key_types()));
}

AttentionOptimum solve_rank_one_products(const TrainingObjective& o) {
  if (o.n_query_types() == 1) return solve_free_products(o);
  const RankOneProfile profile(o);
  const auto fast = [&](double theta) { return profile.loss(theta); };

  // θ and θ + π give the same set of P (κ changes sign), so the profile has period π.
  constexpr int kGrid = 1440;
  const double step = std::numbers::pi / kGrid;
  std::vector<double> grid(kGrid);
  for (int i = 0; i < kGrid; ++i) grid[i] = fast(i * step);
  double best_theta = 0, best_loss = grid[0];
  for (int i = 0; i < kGrid; ++i) {
    const double prev = grid[(i + kGrid - 1) % kGrid], next = grid[(i + 1) % kGrid];
    if (grid[i] > prev || grid[i] > next) continue;  // not a grid minimum
    const double theta = golden_section_minimum(fast, (i - 1) * step, (i + 1) * step);
    const double loss = fast(theta);
    if (loss < best_loss) best_loss = loss, best_theta = theta;
  }
  // The Gram form loses half the digits to cancellation (E z^2 - h^T G^+ h), which would leave θ
  // only ~1e-8 accurate; the final search uses the loss of the solved P itself.
  const auto accurate = [&](double theta) { return o.loss(rank_one_at(o, theta)); };
  const double theta = golden_section_minimum(accurate, best_theta - step, best_theta + step);
  return make_optimum(o, rank_one_at(o, theta));
}

}  // namespace lenlab
