// The linear-attention model as a linear function of its products matrix, and its test error.
#include "theory/linear_attention.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace lenlab {
namespace {

// How many attended tokens of this type a sequence of the class has.
double key_count(Token type, const SequenceClass& c) {
  if (type == kZero) return c.length - c.n_ones;
  if (type == kOne) return c.n_ones;
  return 1;  // BOS or EOS: present once
}

}  // namespace

int query_row(const LayoutShape& shape, const SequenceClass& c) {
  // Layouts with EOS have the single query type EOS; the others query with the last bit, whose
  // row index equals its value (query_types = {0, 1}).
  return shape.query_types.size() == 1 ? 0 : c.last_bit;
}

Eigen::RowVectorXd attention_features(const LayoutShape& shape, const SequenceClass& c) {
  const int n_keys = static_cast<int>(shape.key_types.size());
  const double k = c.length + shape.n_special;  // attended tokens, the normaliser of eq. 6
  Eigen::RowVectorXd x = Eigen::RowVectorXd::Zero(shape.query_types.size() * n_keys);
  const int row = query_row(shape, c);
  for (int s = 0; s < n_keys; ++s) x(row * n_keys + s) = key_count(shape.key_types[s], c) / k;
  return x;
}

double attention_output(const Eigen::MatrixXd& products, const LayoutShape& shape,
                        const SequenceClass& c) {
  if (products.rows() != static_cast<Eigen::Index>(shape.query_types.size()) ||
      products.cols() != static_cast<Eigen::Index>(shape.key_types.size()))
    throw std::invalid_argument("attention_output: products matrix does not match the layout");
  // Σ_s P[row][s] c_s / k without building the feature row: this runs for every class of every
  // test length.
  const int row = query_row(shape, c);
  double g = 0;
  for (size_t s = 0; s < shape.key_types.size(); ++s)
    g += products(row, static_cast<Eigen::Index>(s)) * key_count(shape.key_types[s], c);
  return g / (c.length + shape.n_special);
}

Eigen::VectorXd flatten_products(const Eigen::MatrixXd& products) {
  Eigen::VectorXd flat(products.size());
  for (Eigen::Index t = 0; t < products.rows(); ++t)
    for (Eigen::Index s = 0; s < products.cols(); ++s)
      flat(t * products.cols() + s) = products(t, s);
  return flat;
}

Eigen::MatrixXd unflatten_products(const Eigen::VectorXd& flat, int n_query_types,
                                   int n_key_types) {
  if (flat.size() != static_cast<Eigen::Index>(n_query_types) * n_key_types)
    throw std::invalid_argument("unflatten_products: size does not match |Q| x |K|");
  Eigen::MatrixXd products(n_query_types, n_key_types);
  for (int t = 0; t < n_query_types; ++t)
    for (int s = 0; s < n_key_types; ++s) products(t, s) = flat(t * n_key_types + s);
  return products;
}

LengthError length_error(const Eigen::MatrixXd& products, TokenLayout layout, TaskKind task,
                         const Reparam& f, int length) {
  const LayoutShape shape = layout_shape(layout);
  LengthError e;
  e.length = length;
  for (const SequenceClass& c : sequence_classes(task, length)) {
    if (c.probability == 0) continue;  // underflowed tail of a very long length
    const double y = task_target(task, length, c.n_ones);
    const double y_hat = f.inverse(attention_output(products, shape, c));
    e.mean_target += c.probability * y;
    e.mean_prediction += c.probability * y_hat;
    e.mse += std::isfinite(y_hat) ? c.probability * (y_hat - y) * (y_hat - y)
                                  : std::numeric_limits<double>::infinity();
  }
  return e;
}

}  // namespace lenlab
