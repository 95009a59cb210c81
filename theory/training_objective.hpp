#pragma once
// The paper's training objective (eq. 8) for the linear-attention model, exactly:
//   L(P) = (1/l_train) Σ_{l=1..l_train} E_x[(g_P(x) - f(y(x)))^2],
// x of length l drawn from the task's distribution, f the target reparameterization (identity in
// the paper). Eq. 8 averages over the prefixes x[:l] of one sequence of length l_train; a prefix of
// fair bits is itself fair bits, so this is the same number as lenlab's training distribution
// (lengths uniform in 1..l_train). Since g is linear in P, L is a weighted least-squares problem
// with one row per (length, class).
#include <vector>

#include <Eigen/Dense>

#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "theory/token_layout.hpp"

namespace lenlab {

class TrainingObjective {
 public:
  // f must be finite at every training target (run f.check_domain first); throws
  // std::invalid_argument otherwise or when l_train < 1.
  TrainingObjective(TaskKind task, int l_train, TokenLayout layout, const Reparam& f);

  TaskKind task() const { return task_; }
  int l_train() const { return l_train_; }
  TokenLayout layout() const { return layout_; }
  const LayoutShape& shape() const { return shape_; }
  int n_query_types() const { return static_cast<int>(shape_.query_types.size()); }
  int n_key_types() const { return static_cast<int>(shape_.key_types.size()); }

  // One row per (training length, class of positive probability):
  const Eigen::MatrixXd& design() const { return design_; }    // [rows x |Q||K|] features
  const Eigen::VectorXd& weights() const { return weights_; }  // [rows] P(class) / l_train, sum 1
  const Eigen::VectorXd& targets() const { return targets_; }  // [rows] f(y)
  const std::vector<int>& query_rows() const { return query_rows_; }  // [rows] row of P used

  // L(P) for a |Q| x |K| products matrix.
  double loss(const Eigen::MatrixXd& products) const;

 private:
  TaskKind task_;
  int l_train_;
  TokenLayout layout_;
  LayoutShape shape_;
  Eigen::MatrixXd design_;
  Eigen::VectorXd weights_, targets_;
  std::vector<int> query_rows_;
};

}  // namespace lenlab
