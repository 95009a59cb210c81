#pragma once
// The losses, as layers: each reads a head's outputs at its rows and writes the loss of every
// model and the gradient with respect to the outputs. Rows carry weights (a row of weight 0 adds
// nothing: padding, or a row a method leaves out), so "loss on the answer only" or a loss on the
// overlap of two views is a choice of weights, not another loss.
#include <algorithm>
#include <cmath>
#include <cstddef>

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

}  // namespace lenlab::cpu
