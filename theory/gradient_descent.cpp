// Gradient descent on eq. 8 through the model's own parameters (W, b of Q, K, V).
#include "theory/gradient_descent.hpp"

#include <stdexcept>

#include "core/rng.hpp"
#include "theory/linear_attention.hpp"

namespace lenlab {
namespace {

Eigen::Vector3d embedding(Token type) {
  return {type == kOne ? 1.0 : 0.0, type == kBos ? 1.0 : 0.0, type == kEos ? 1.0 : 0.0};
}

}  // namespace

LinearAttentionParams LinearAttentionParams::random(int head_dim, double scale, uint64_t seed) {
  if (head_dim < 1) throw std::invalid_argument("LinearAttentionParams: head_dim < 1");
  Rng rng(seed);
  const auto normal = [&](auto& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = scale * rng.normal();
  };
  LinearAttentionParams p;
  p.w_q.resize(3, head_dim), p.w_k.resize(3, head_dim);
  p.b_q.resize(head_dim), p.b_k.resize(head_dim);
  normal(p.w_q), normal(p.w_k), normal(p.b_q), normal(p.b_k), normal(p.w_v);
  p.b_v = scale * rng.normal();
  return p;
}

Eigen::MatrixXd products_of(const LinearAttentionParams& p, const LayoutShape& shape) {
  const int nq = static_cast<int>(shape.query_types.size());
  const int nk = static_cast<int>(shape.key_types.size());
  Eigen::MatrixXd products(nq, nk);
  for (int t = 0; t < nq; ++t) {
    const Eigen::RowVectorXd q = embedding(shape.query_types[t]).transpose() * p.w_q + p.b_q;
    for (int s = 0; s < nk; ++s) {
      const Eigen::Vector3d e = embedding(shape.key_types[s]);
      const Eigen::RowVectorXd k = e.transpose() * p.w_k + p.b_k;
      products(t, s) = q.dot(k) * (e.dot(p.w_v) + p.b_v);
    }
  }
  return products;
}

GradientDescentResult gradient_descent(const TrainingObjective& o,
                                       const GradientDescentOptions& options) {
  const LayoutShape& shape = o.shape();
  const int nq = o.n_query_types(), nk = o.n_key_types();
  // Eq. 8 = p^T H p - 2 h^T p + const in p = flat(P): the gradient in P is 2 (H p - h).
  const Eigen::MatrixXd h_mat = o.design().transpose() * o.weights().asDiagonal() * o.design();
  const Eigen::VectorXd h_vec = o.design().transpose() * o.weights().cwiseProduct(o.targets());

  LinearAttentionParams p =
      LinearAttentionParams::random(options.head_dim, options.init_scale, options.seed);
  const int d = options.head_dim;
  Eigen::MatrixXd q(nq, d), k(nk, d);  // per-type Q and K rows
  Eigen::VectorXd v(nk);               // per-type V
  Eigen::MatrixXd eq(nq, 3), ek(nk, 3);
  for (int t = 0; t < nq; ++t) eq.row(t) = embedding(shape.query_types[t]).transpose();
  for (int s = 0; s < nk; ++s) ek.row(s) = embedding(shape.key_types[s]).transpose();

  for (int step = 0; step < options.steps; ++step) {
    q = eq * p.w_q + Eigen::VectorXd::Ones(nq) * p.b_q;
    k = ek * p.w_k + Eigen::VectorXd::Ones(nk) * p.b_k;
    v = ek * p.w_v + Eigen::VectorXd::Constant(nk, p.b_v);
    const Eigen::MatrixXd qk = q * k.transpose();  // [nq x nk]
    const Eigen::MatrixXd products = qk * v.asDiagonal();
    const Eigen::VectorXd g_flat = 2.0 * (h_mat * flatten_products(products) - h_vec);
    const Eigen::MatrixXd g = unflatten_products(g_flat, nq, nk);  // dL/dP
    // P[t][s] = (Q_t · K_s) V_s.
    const Eigen::MatrixXd gv = g * v.asDiagonal();                               // G[t][s] V_s
    const Eigen::MatrixXd d_q = gv * k;                                          // [nq x d]
    const Eigen::MatrixXd d_k = gv.transpose() * q;                              // [nk x d]
    const Eigen::VectorXd d_v = g.cwiseProduct(qk).colwise().sum().transpose();  // [nk]
    // Q, K, V are affine in the embedding.
    p.w_q -= options.learning_rate * eq.transpose() * d_q;
    p.b_q -= options.learning_rate * d_q.colwise().sum();
    p.w_k -= options.learning_rate * ek.transpose() * d_k;
    p.b_k -= options.learning_rate * d_k.colwise().sum();
    p.w_v -= options.learning_rate * ek.transpose() * d_v;
    p.b_v -= options.learning_rate * d_v.sum();
  }
  GradientDescentResult result;
  result.products = products_of(p, shape);
  result.loss = o.loss(result.products);
  result.params = std::move(p);
  return result;
}

}  // namespace lenlab
