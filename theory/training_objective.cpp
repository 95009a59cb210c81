// Eq. 8 as a weighted least-squares table over (length, class).
#include "theory/training_objective.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "theory/linear_attention.hpp"
#include "theory/sequence_classes.hpp"

namespace lenlab {

TrainingObjective::TrainingObjective(TaskKind task, int l_train, TokenLayout layout,
                                     const Reparam& f)
    : task_(task), l_train_(l_train), layout_(layout), shape_(layout_shape(layout)) {
  if (l_train < 1)
    throw std::invalid_argument(fmt::format("TrainingObjective: l_train {} < 1", l_train));
  std::vector<SequenceClass> rows;
  for (int l = 1; l <= l_train; ++l) {
    for (const SequenceClass& c : sequence_classes(task, l)) rows.push_back(c);
  }
  const int n = static_cast<int>(rows.size());
  design_.resize(n, n_query_types() * n_key_types());
  weights_.resize(n);
  targets_.resize(n);
  query_rows_.resize(n);
  for (int r = 0; r < n; ++r) {
    const SequenceClass& c = rows[r];
    design_.row(r) = attention_features(shape_, c);
    weights_(r) = c.probability / l_train;
    const double y = task_target(task, c.length, c.n_ones);
    targets_(r) = f.forward(y);
    if (!std::isfinite(targets_(r)))
      throw std::invalid_argument(fmt::format(
          "TrainingObjective: f({}) is not finite; run Reparam::check_domain first", y));
    query_rows_[r] = query_row(shape_, c);
  }
}

double TrainingObjective::loss(const Eigen::MatrixXd& products) const {
  const Eigen::VectorXd residual = design_ * flatten_products(products) - targets_;
  return weights_.dot(residual.cwiseProduct(residual));
}

}  // namespace lenlab
