// The paper's Γ closed forms, and the Γ ansatz fitted by eq. 8 for any task and target map.
#include "theory/paper_closed_form.hpp"

#include <stdexcept>

#include "theory/linear_attention.hpp"

namespace lenlab {

double harmonic_number(int n) {
  double h = 0;
  for (int i = n; i >= 1; --i) h += 1.0 / i;  // smallest terms first
  return h;
}

double expected_ones_squared(int l) {
  return l * (l + 1.0) / 4.0;
}

double paper_gamma_length(int l_train) {
  return (l_train + 1.0) / 2.0;
}

double paper_gamma_sum(int l_train) {
  const double big_l = l_train;
  return big_l * (big_l + 3.0) / (2.0 * (big_l + harmonic_number(l_train)));
}

double paper_length_error(int l_train, int l) {
  const double d = l - paper_gamma_length(l_train);
  return d * d;
}

double paper_sum_error(int l_train, int l) {
  // g = Γ n / l against n: E[(Γ/l - 1)^2 n^2] = (Γ - l)^2 / l^2 · l(l+1)/4.
  const double d = paper_gamma_sum(l_train) - l;
  return (l + 1.0) / (4.0 * l) * d * d;
}

double paper_mean_error_near_optimum(double eps, int l) {
  // g = (1 + eps) n / l against n / l: eps^2 E[n^2] / l^2.
  return eps * eps * expected_ones_squared(l) / (static_cast<double>(l) * l);
}

GammaForm fit_paper_gamma(const TrainingObjective& o) {
  if (o.layout() != TokenLayout::kNone)
    throw std::invalid_argument("fit_paper_gamma: the paper's Γ form is for layout 'none'");
  // The ansatz's P per unit Γ; the model is then g = Γ φ with φ = design · flat(P_unit).
  Eigen::MatrixXd unit(2, 2);
  if (o.task() == TaskKind::kLength)
    unit << 1, 1, 1, 1;
  else
    unit << 0, 1, 0, 1;
  const Eigen::VectorXd phi = o.design() * flatten_products(unit);
  const Eigen::VectorXd wphi = o.weights().cwiseProduct(phi);
  GammaForm form;
  form.gamma = wphi.dot(o.targets()) / wphi.dot(phi);
  form.products = form.gamma * unit;
  form.train_loss = o.loss(form.products);
  return form;
}

}  // namespace lenlab
