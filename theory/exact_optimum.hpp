#pragma once
// The exact minimisers of the training objective (eq. 8) over the linear-attention model's
// function class {P = q κ^T-sums : rank P <= d} (theory/linear_attention.hpp, docs/theory.md).
//
// Two head sizes matter, because the products matrix P has |Q| <= 2 rows:
// - d >= |Q| ("free"): every P is reachable, so the optimum is an ordinary weighted least-squares
//   problem, solved by a complete orthogonal decomposition of the weighted design;
// - d = 1 ("rank one", the paper's scalar q', q'', κ', κ''): P = q κ^T. With q = r (cos θ, sin θ)
//   the best κ for each θ is again a least-squares problem, so the loss is a function of θ alone
//   (variable projection); it is scanned on a fine grid over [0, π) and every grid minimum refined
//   by golden-section search, then κ is solved at the best θ.
// With EOS the query is always EOS (|Q| = 1) and both coincide: every P is rank one.
#include <Eigen/Dense>

#include "theory/training_objective.hpp"

namespace lenlab {

struct AttentionOptimum {
  Eigen::MatrixXd products;  // [|Q| x |K|] P at the optimum
  double train_loss = 0;     // eq. 8 at P
  int rank = 0;              // numerical rank of P
};

// Minimum-norm P among the minimisers when the training data do not determine P (l_train = 1,
// or the BOS and EOS columns under bos,eos, which always appear together).
AttentionOptimum solve_free_products(const TrainingObjective& objective);

AttentionOptimum solve_rank_one_products(const TrainingObjective& objective);

// Singular values above rel_tol times the largest (0 for the zero matrix).
int numerical_rank(const Eigen::MatrixXd& m, double rel_tol = 1e-9);

}  // namespace lenlab
