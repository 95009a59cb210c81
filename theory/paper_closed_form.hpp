#pragma once
// The closed forms of the paper's Appendix B.1 (Theorem 2), with the sum task's constant
// corrected: E[(#ones)^2] over Binomial(l, 1/2) is l(l+1)/4, not l(l+1)/2.
//
// The paper's ansatz, in the layout without special tokens: every product the target needs equals
// one number Γ.
//   length:              q'κ' = q'κ'' = q''κ' = q''κ'' = Γ      g ≡ Γ
//   sum, mean(-uniform): q'κ' = q''κ' = Γ, κ'' = 0               g = Γ n / l
// Eq. 8 restricted to this ansatz is a one-parameter least-squares problem.
#include <Eigen/Dense>

#include "theory/training_objective.hpp"

namespace lenlab {

double harmonic_number(int n);        // H_n = Σ_{i=1..n} 1/i
double expected_ones_squared(int l);  // E[n^2] for n ~ Binomial(l, 1/2): l(l+1)/4

// Identity targets (L = l_train):
double paper_gamma_length(int l_train);  // Γ* = (L + 1) / 2
double paper_gamma_sum(int l_train);     // Γ* = L(L + 3) / (2 (L + H_L))
// The test error at length l of the ansatz at Γ*:
double paper_length_error(int l_train, int l);  // (l - Γ*)^2
double paper_sum_error(int l_train, int l);     // (l + 1) / (4 l) (Γ* - l)^2 (paper: (l+1)/(2l))
// Mean task near its optimum Γ = 1: with Γ = 1 + eps the error is eps^2 (l + 1) / (4 l) <= eps^2/2.
double paper_mean_error_near_optimum(double eps, int l);

// The ansatz fitted to any task and target map f by eq. 8 (layout none only; throws
// std::invalid_argument otherwise): Γ = Σ w φ f(y) / Σ w φ^2 with φ = 1 (length) or n/l.
// For identity targets Γ equals the closed forms above (tested).
struct GammaForm {
  double gamma = 0;
  Eigen::MatrixXd products;  // [2 x 2] P of the ansatz: Γ [[1, 1], [1, 1]] or Γ [[0, 1], [0, 1]]
  double train_loss = 0;
};
GammaForm fit_paper_gamma(const TrainingObjective& objective);

}  // namespace lenlab
