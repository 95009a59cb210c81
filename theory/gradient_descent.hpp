#pragma once
// Plain gradient descent on eq. 8 over the linear-attention model's actual parameters, the
// independent check that the exact solvers find what training finds. The model is eq. 7 with the
// biases of Appendix B.1 and a token embedding e(τ) = (bit, is BOS, is EOS) in R^3:
//   Q = e W_q + b_q,  K = e W_k + b_k   (d-vectors),     V = e · w_v + b_v   (a scalar),
// so without special tokens Q, K, V are the paper's q', q'', k', k'', v', v'' (input 1 / 0).
// The loss is exact (eq. 8 as a quadratic in P = [Q_t · K_s V_s], see TrainingObjective).
#include <cstdint>

#include <Eigen/Dense>

#include "theory/training_objective.hpp"

namespace lenlab {

struct LinearAttentionParams {
  Eigen::MatrixXd w_q, w_k;     // [3 x d]
  Eigen::RowVectorXd b_q, b_k;  // [d]
  Eigen::Vector3d w_v = Eigen::Vector3d::Zero();
  double b_v = 0;

  int head_dim() const { return static_cast<int>(b_q.size()); }
  // Every entry N(0, scale^2), from lenlab's Rng.
  static LinearAttentionParams random(int head_dim, double scale, uint64_t seed);
};

// P[t][s] = Q(query type t) · K(key type s) V(key type s), in the layout's type order.
Eigen::MatrixXd products_of(const LinearAttentionParams& params, const LayoutShape& shape);

struct GradientDescentOptions {
  int head_dim = 1;
  double learning_rate = 0.01;
  int steps = 100000;
  double init_scale = 0.5;
  uint64_t seed = 1;
};

struct GradientDescentResult {
  LinearAttentionParams params;
  Eigen::MatrixXd products;  // products_of(params) at the end
  double loss = 0;           // eq. 8 at the end
};

GradientDescentResult gradient_descent(const TrainingObjective& objective,
                                       const GradientDescentOptions& options);

}  // namespace lenlab
