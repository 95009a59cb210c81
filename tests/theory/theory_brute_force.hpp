#pragma once
// Brute force for the theory tests: every bit string of a length enumerated with its probability,
// the linear-attention model evaluated token by token (eqs. 7 and 8 literally), the enumerated
// least-squares problem, and an independent solve of it. Slow and obviously right, on purpose.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "theory/exact_optimum.hpp"
#include "theory/linear_attention.hpp"
#include "theory/sequence_classes.hpp"
#include "theory/training_objective.hpp"

namespace lenlab::test {

inline constexpr TaskKind kAllTasks[] = {TaskKind::kMean, TaskKind::kLength, TaskKind::kSum,
                                         TaskKind::kMeanUniform};
inline constexpr TokenLayout kAllLayouts[] = {TokenLayout::kNone, TokenLayout::kBos,
                                              TokenLayout::kEos, TokenLayout::kBosEos};

// |a - b| <= tol max(1, |b|).
inline bool near(double a, double b, double tol) {
  return std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
}

inline double binomial(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// Every bit string of length l with its probability under the task.
struct Sequence {
  std::vector<int> bits;
  int n_ones = 0;
  double probability = 0;
};

inline std::vector<Sequence> all_sequences(TaskKind task, int l) {
  std::vector<Sequence> out;
  for (int mask = 0; mask < (1 << l); ++mask) {
    Sequence s;
    for (int i = 0; i < l; ++i) s.bits.push_back((mask >> i) & 1);
    s.n_ones = static_cast<int>(std::count(s.bits.begin(), s.bits.end(), 1));
    s.probability = task == TaskKind::kMeanUniform ? 1.0 / ((l + 1) * binomial(l, s.n_ones))
                                                   : std::ldexp(1.0, -l);
    out.push_back(s);
  }
  return out;
}

inline int type_index(const std::vector<Token>& types, Token t) {
  const auto it = std::find(types.begin(), types.end(), t);
  if (it == types.end()) throw std::logic_error("token type outside the layout");
  return static_cast<int>(it - types.begin());
}

// Eq. 7 literally: g = (1/k) Σ_i q_{query}·κ_{token i} = (1/k) Σ_i P[query][type of token i].
inline double literal_output(const Eigen::MatrixXd& p, TokenLayout layout,
                             const std::vector<int>& bits) {
  const LayoutShape shape = layout_shape(layout);
  const std::vector<Token> tokens = layout_tokens(layout, bits);
  const int row = type_index(shape.query_types, tokens.back());
  double sum = 0;
  for (const Token t : tokens) sum += p(row, type_index(shape.key_types, t));
  return sum / static_cast<double>(tokens.size());
}

// Eq. 8 by enumeration: lengths 1..l_train, every sequence of each.
inline double enumerated_loss(const Eigen::MatrixXd& p, TaskKind task, int l_train,
                              TokenLayout layout, const Reparam& f) {
  double loss = 0;
  for (int l = 1; l <= l_train; ++l) {
    for (const Sequence& s : all_sequences(task, l)) {
      const double r =
          literal_output(p, layout, s.bits) - f.forward(task_target(task, l, s.n_ones));
      loss += s.probability * r * r / l_train;
    }
  }
  return loss;
}

// Eq. 8 exactly as printed (layout none, fair bits): the mean over the prefixes x[:i] of a
// sequence x of length l_train, averaged over all x.
inline double prefix_loss(const Eigen::MatrixXd& p, TaskKind task, int l_train) {
  double loss = 0;
  for (const Sequence& s : all_sequences(task, l_train)) {
    for (int i = 1; i <= l_train; ++i) {
      const std::vector<int> prefix(s.bits.begin(), s.bits.begin() + i);
      const int ones = static_cast<int>(std::count(prefix.begin(), prefix.end(), 1));
      const double r = literal_output(p, TokenLayout::kNone, prefix) - task_target(task, i, ones);
      loss += s.probability * r * r / l_train;
    }
  }
  return loss;
}

// The test error at one length by enumeration.
inline double enumerated_mse(const Eigen::MatrixXd& p, TaskKind task, int l, TokenLayout layout,
                             const Reparam& f) {
  double mse = 0;
  for (const Sequence& s : all_sequences(task, l)) {
    const double r = f.inverse(literal_output(p, layout, s.bits)) - task_target(task, l, s.n_ones);
    mse += s.probability * r * r;
  }
  return mse;
}

// The enumerated least-squares problem: one row per (length, sequence), features = g of each
// unit products matrix, computed literally. Independent of sequence_classes and the solvers.
struct EnumeratedProblem {
  Eigen::MatrixXd x;  // [rows x |Q||K|]
  Eigen::VectorXd w, z;
};

inline EnumeratedProblem enumerated_problem(TaskKind task, int l_train, TokenLayout layout,
                                            const Reparam& f) {
  const LayoutShape shape = layout_shape(layout);
  const int nq = static_cast<int>(shape.query_types.size());
  const int nk = static_cast<int>(shape.key_types.size());
  std::vector<Eigen::RowVectorXd> rows;
  std::vector<double> w, z;
  for (int l = 1; l <= l_train; ++l) {
    for (const Sequence& s : all_sequences(task, l)) {
      Eigen::RowVectorXd x(nq * nk);
      for (int i = 0; i < nq * nk; ++i) {
        Eigen::MatrixXd unit = Eigen::MatrixXd::Zero(nq, nk);
        unit(i / nk, i % nk) = 1;
        x(i) = literal_output(unit, layout, s.bits);
      }
      rows.push_back(x);
      w.push_back(s.probability / l_train);
      z.push_back(f.forward(task_target(task, l, s.n_ones)));
    }
  }
  EnumeratedProblem e;
  e.x.resize(static_cast<Eigen::Index>(rows.size()), nq * nk);
  for (size_t r = 0; r < rows.size(); ++r) e.x.row(static_cast<Eigen::Index>(r)) = rows[r];
  e.w = Eigen::Map<Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size()));
  e.z = Eigen::Map<Eigen::VectorXd>(z.data(), static_cast<Eigen::Index>(z.size()));
  return e;
}

// Minimum-norm solution of the weighted normal equations by SVD (a different method from the
// solver's orthogonal decomposition of the design).
inline Eigen::VectorXd normal_equations(const Eigen::MatrixXd& x, const Eigen::VectorXd& w,
                                        const Eigen::VectorXd& z) {
  const Eigen::MatrixXd a = x.transpose() * w.asDiagonal() * x;
  const Eigen::VectorXd b = x.transpose() * w.cwiseProduct(z);
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
  svd.setThreshold(1e-10);
  return svd.solve(b);
}

inline Eigen::MatrixXd random_products(TokenLayout layout, uint64_t seed) {
  const LayoutShape shape = layout_shape(layout);
  Rng rng(seed);
  Eigen::MatrixXd p(shape.query_types.size(), shape.key_types.size());
  for (Eigen::Index i = 0; i < p.size(); ++i) p.data()[i] = 2 * rng.normal();
  return p;
}

inline Reparam identity() {
  return Reparam::make("identity");
}

// A target map that is defined on every task's targets (0 included) and not linear.
inline Reparam checked_reparam(TaskKind task, const std::string& spec, double shift, int l_max) {
  Reparam f = Reparam::make(spec, "", shift);
  f.check_domain(task_target_values(task, 1, l_max), task_name(task));
  return f;
}

}  // namespace lenlab::test
