#pragma once
// The one-layer causal linear-attention model of the paper's Appendix B.1 (eq. 7), reduced to
// what it computes on 0/1 sequences. With q_t the query of token type t and κ_s = K_s V_s the
// key times value of type s (each a d-vector), the output at the last of k tokens is
//   g = (1/k) Σ_i q_{type(k)} · κ_{type(i)} = Σ_s P[type(k), s] c_s / k,
// with P[t][s] = q_t · κ_s the products matrix (rows: query types, columns: key types, in the
// order of layout_shape) and c_s the number of attended tokens of type s. So g is linear in P,
// and the model's function class is {P : rank P <= d} (docs/theory.md).
#include <Eigen/Dense>

#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "theory/sequence_classes.hpp"
#include "theory/token_layout.hpp"

namespace lenlab {

// g's coefficients on P for one sequence class: a row of |Q|·|K| numbers (P flattened row by
// row), c_s / k in the query's row and 0 elsewhere.
Eigen::RowVectorXd attention_features(const LayoutShape& shape, const SequenceClass& c);

// The row of P a class's query uses.
int query_row(const LayoutShape& shape, const SequenceClass& c);

// P flattened row by row (the order of attention_features), and back.
Eigen::VectorXd flatten_products(const Eigen::MatrixXd& products);
Eigen::MatrixXd unflatten_products(const Eigen::VectorXd& flat, int n_query_types, int n_key_types);

// g for one class; products is |Q| x |K|.
double attention_output(const Eigen::MatrixXd& products, const LayoutShape& shape,
                        const SequenceClass& c);

// The test error at one length, exactly over that length's classes; predictions are
// y_hat = f^-1(g) (f.inverse, so f must have passed check_domain when it inverts numerically).
struct LengthError {
  int length = 0;
  double mean_target = 0;      // E[y]
  double mean_prediction = 0;  // E[y_hat]; +-inf or NaN when some y_hat is not finite
  double mse = 0;              // E[(y_hat - y)^2]; +inf when some y_hat is not finite
};

LengthError length_error(const Eigen::MatrixXd& products, TokenLayout layout, TaskKind task,
                         const Reparam& f, int length);

}  // namespace lenlab
