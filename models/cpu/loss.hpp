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

// The symmetric cross-entropy between pairs of the token head's rows, per model k:
//   loss[k] = Σ_p w_p SCE(a_p, b_p),   SCE = −⟨q, log p⟩ − ⟨p, log q⟩,
// with p = softmax(z_a) and q = softmax(z_b) of the pair's rows a = first[p], b = second[p]
// (indices into the R rows), accumulated in double. ADDS into dlogits [K, R, V] (after the
// cross-entropy wrote it): w_p ∂SCE/∂z_a,u = w_p (p_u − q_u − p_u (log q_u − ⟨p, log q⟩)), and the
// same with a and b swapped. first, second, weight [K, P]; a pair with an index < 0 or weight 0
// (padding) is skipped. A row belongs to at most one pair (PackedBatch checks), so the GPU's
// pairs never write the same row.
template <class T>
void sce_pair_loss(T* dlogits, double* loss, const T* logits, const int* first, const int* second,
                   const double* weight, int P, int R, int V, ops::Models m = {}) {
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
      if (first[i] < 0 || second[i] < 0 || weight[i] == 0) continue;
      const size_t a = (static_cast<size_t>(k) * R + first[i]) * V;
      const size_t b = (static_cast<size_t>(k) * R + second[i]) * V;
      log_softmax(logits + a, log_p);
      log_softmax(logits + b, log_q);
      double p_log_q = 0, q_log_p = 0;  // ⟨p, log q⟩, ⟨q, log p⟩
      for (int v = 0; v < V; ++v) {
        p_log_q += std::exp(log_p[v]) * log_q[v];
        q_log_p += std::exp(log_q[v]) * log_p[v];
      }
      const double w = weight[i];
      sum += w * -(p_log_q + q_log_p);
      for (int v = 0; v < V; ++v) {
        const double pv = std::exp(log_p[v]), qv = std::exp(log_q[v]);
        dlogits[a + v] += static_cast<T>(w * (pv - qv - pv * (log_q[v] - p_log_q)));
        dlogits[b + v] += static_cast<T>(w * (qv - pv - qv * (log_p[v] - q_log_p)));
      }
    }
    loss[k] = sum;
  }
}

}  // namespace lenlab::cpu
