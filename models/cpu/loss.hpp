#pragma once
// The losses, as layers: each reads a head's outputs at its rows and writes the loss of every
// model and the gradient with respect to the outputs. Rows carry weights (a row of weight 0 adds
// nothing: padding, or a row a method leaves out), so "loss on the answer only" or a loss on the
// overlap of two views is a choice of weights, not another loss.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "models/ops/args.hpp"

namespace lenlab::cpu {

// Squared error, per model k: loss[k] = Σ_r w_r (pred_r − target_r)², accumulated in double;
// dpred [K, R] = 2 w_r (pred_r − target_r); a row of weight 0 is skipped (gradient 0), so a
// non-finite prediction in a padding row cannot turn the loss into NaN. pred [K, R]; target,
// weight [K, R]; loss [K].
template <class T>
void mse_loss(T* dpred, double* loss, const T* pred, const double* target, const double* weight,
              int R, ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    double sum = 0;
    for (int r = 0; r < R; ++r) {
      const size_t i = static_cast<size_t>(k) * R + r;
      if (weight[i] == 0) {  // padding or a row left out: adds nothing, whatever its prediction
        dpred[i] = 0;
        continue;
      }
      const double diff = static_cast<double>(pred[i]) - target[i];
      sum += weight[i] * diff * diff;
      dpred[i] = static_cast<T>(2.0 * weight[i] * diff);
    }
    loss[k] = sum;
  }
}

// Softmax cross-entropy over V classes, per model k: loss[k] = Σ_r w_r (log Σ_v e^{z_rv} −
// z_r,y_r), accumulated in double; dlogits [K, R, V] = w_r (softmax(z_r) − onehot(y_r)). A row with
// label < 0 or weight 0 is skipped (gradient 0). logits [K, R, V]; labels [K, R]; weight [K, R].
template <class T>
void cross_entropy_loss(T* dlogits, double* loss, const T* logits, const int* labels,
                        const double* weight, int R, int V, ops::Models m = {}) {
  for (int k = 0; k < m.count; ++k) {
    double sum = 0;
    for (int r = 0; r < R; ++r) {
      const size_t i = static_cast<size_t>(k) * R + r;
      const T* z = logits + i * V;
      T* dz = dlogits + i * V;
      if (labels[i] < 0 || weight[i] == 0) {
        std::fill_n(dz, V, T(0));
        continue;
      }
      double mx = -INFINITY;
      for (int v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(z[v]));
      double norm = 0;
      for (int v = 0; v < V; ++v) norm += std::exp(static_cast<double>(z[v]) - mx);
      sum += weight[i] * (mx + std::log(norm) - static_cast<double>(z[labels[i]]));
      for (int v = 0; v < V; ++v) {
        const double p = std::exp(static_cast<double>(z[v]) - mx) / norm;
        dz[v] = static_cast<T>(weight[i] * (p - (v == labels[i] ? 1.0 : 0.0)));
      }
    }
    loss[k] = sum;
  }
}

// The alignment loss between pairs of the token head's rows, per model k:
//   loss[k] = Σ_p w_p (KL(p‖q) + KL(q‖p)) + e_p (H(p) + H(q)),
// with p = softmax(z_a) and q = softmax(z_b) of the pair's rows a = first[p], b = second[p]
// (indices into the R rows), accumulated in double. e_p = w_p is paper 000's symmetric
// cross-entropy SCE(p, q) = −⟨q, log p⟩ − ⟨p, log q⟩ (eq. 1), e_p = 0 the symmetric KL divergence
// alone (tasks/batch.hpp, ReadoutPairs). ADDS into dlogits [K, R, V] (after the cross-entropy
// wrote it):
//   ∂/∂z_a,u = w_p (p_u − q_u + p_u (log p_u − log q_u − KL(p‖q))) − e_p p_u (log p_u + H(p)),
// and the same with a and b swapped (the first term is the two KLs', the second the entropy's).
// first, second, weight, entropy_weight [K, P]; a pair with an index < 0 or both weights 0
// (padding) is skipped. A row belongs to at most one pair (PackedBatch checks), so the GPU's
// pairs never write the same row.
template <class T>
void pair_alignment_loss(T* dlogits, double* loss, const T* logits, const int* first,
                         const int* second, const double* weight, const double* entropy_weight,
                         int P, int R, int V, ops::Models m = {}) {
  std::vector<double> log_p(V), log_q(V);
  auto log_softmax = [V](const T* z, std::vector<double>& out) {
    double mx = -INFINITY;
    for (int v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(z[v]));
    double norm = 0;
    for (int v = 0; v < V; ++v) norm += std::exp(static_cast<double>(z[v]) - mx);
    const double lse = mx + std::log(norm);
    for (int v = 0; v < V; ++v) out[v] = static_cast<double>(z[v]) - lse;
  };
  for (int k = 0; k < m.count; ++k) {
    double sum = 0;
    for (int p = 0; p < P; ++p) {
      const size_t i = static_cast<size_t>(k) * P + p;
      const double w = weight[i], e = entropy_weight[i];
      if (first[i] < 0 || second[i] < 0 || (w == 0 && e == 0)) continue;
      const size_t a = (static_cast<size_t>(k) * R + first[i]) * V;
      const size_t b = (static_cast<size_t>(k) * R + second[i]) * V;
      log_softmax(logits + a, log_p);
      log_softmax(logits + b, log_q);
      double kl_pq = 0, kl_qp = 0, h_p = 0, h_q = 0;
      for (int v = 0; v < V; ++v) {
        const double pv = std::exp(log_p[v]), qv = std::exp(log_q[v]);
        kl_pq += pv * (log_p[v] - log_q[v]);
        kl_qp += qv * (log_q[v] - log_p[v]);
        h_p -= pv * log_p[v];
        h_q -= qv * log_q[v];
      }
      sum += w * (kl_pq + kl_qp) + e * (h_p + h_q);
      for (int v = 0; v < V; ++v) {
        const double pv = std::exp(log_p[v]), qv = std::exp(log_q[v]);
        const double lr = log_p[v] - log_q[v];
        dlogits[a + v] +=
            static_cast<T>(w * (pv - qv + pv * (lr - kl_pq)) - e * pv * (log_p[v] + h_p));
        dlogits[b + v] +=
            static_cast<T>(w * (qv - pv + qv * (-lr - kl_qp)) - e * qv * (log_q[v] + h_q));
      }
    }
    loss[k] = sum;
  }
}

}  // namespace lenlab::cpu
