#pragma once
// Multi-head causal self-attention over packed sequences, one query row of one head at a time.
//   qkv [K, N, 3d]: row t = [q | k | v], head h owns columns h·hd .. (h+1)·hd of each third.
//   out: the heads' outputs side by side (before the output projection).
// Logits, masks, the positional bias, distance caps and RoPE-by-distance: ops::AttentionArgs. The
// training forward keeps each (sequence, head)'s probabilities for the backward (ops::ProbLayout).
// The inference forward keeps nothing (models/cpu/attention_infer.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/cpu/embedding.hpp"
#include "models/ops/args.hpp"
#include "models/ops/tables.hpp"

namespace lenlab::cpu {

namespace detail {

// One head of one sequence of one model.
template <class T>
struct SeqHead {
  const T* qkv = nullptr;    // [L, 3d] the sequence's first row
  const int* pos = nullptr;  // [L] its positions
  int L = 0, d = 0, hd = 0, h = 0;
  T scale = 1;       // scale_s / √hd
  T bias_scale = 1;  // c_s: scale_s when the scale covers the bias too (AttentionArgs), else 1
  const T* bias =
      nullptr;  // head h's bias table of this model (AttentionArgs::bias_table), or null
  // c_s·b[δ] of a bias table b, for a logit whose scale·q·k is already rounded (the inference
  // tiles): there b·1 + logit and b + logit round alike, however a compiler fuses them.
  T scaled_bias(const T* b, int delta) const { return bias_scale * b[delta]; }
  const T* q(int i) const { return qkv + static_cast<size_t>(i) * 3 * d + h * hd; }
  const T* k(int j) const { return qkv + static_cast<size_t>(j) * 3 * d + d + h * hd; }
  const T* v(int j) const { return qkv + static_cast<size_t>(j) * 3 * d + 2 * d + h * hd; }
};

template <class T>
SeqHead<T> seq_head(const T* qkv, const ops::Seqs& q, const ops::AttentionArgs<T>& a, int k, int s,
                    int h, int d, int n_head) {
  const int* off = q.offsets + static_cast<size_t>(k) * (q.n_seq + 1);
  const size_t row0 = static_cast<size_t>(k) * q.rows + off[s];
  SeqHead<T> sh;
  sh.qkv = qkv + row0 * 3 * d;
  sh.pos = q.positions + row0;
  sh.L = off[s + 1] - off[s];
  sh.d = d;
  sh.hd = d / n_head;
  sh.h = h;
  const T seq_scale = a.seq_scale ? a.seq_scale[static_cast<size_t>(k) * q.n_seq + s] : T(1);
  sh.scale = seq_scale / std::sqrt(static_cast<T>(sh.hd));
  if (a.seq_scale_bias) sh.bias_scale = seq_scale;
  sh.bias = a.bias_table(k, h);
  return sh;
}

// δ_ij = pos_i − pos_j, capped at max_distance when that is > 0.
template <class T>
int distance(const SeqHead<T>& sh, const ops::AttentionArgs<T>& a, int i, int j) {
  return a.window.capped(sh.pos[i] - sh.pos[j]);
}

// (R(pos_i)·q)·(R(pos_j)·k) by the relative distance δ alone, pairs (2m, 2m+1) rotated by δ·θ_m:
//   Σ_m cos(δθ_m)·(q0·k0 + q1·k1) + sin(δθ_m)·(q0·k1 − q1·k0)
template <class T>
T rotated_dot(const T* q, const T* k, int half, const T* cos, const T* sin) {
  T dot = 0;
  for (int m = 0; m < half; ++m) {
    const T q0 = q[2 * m], q1 = q[2 * m + 1], k0 = k[2 * m], k1 = k[2 * m + 1];
    dot += cos[m] * (q0 * k0 + q1 * k1) + sin[m] * (q0 * k1 - q1 * k0);
  }
  return dot;
}

// q_i·k_j for keys 0..i into p[0..i]. Eight keys at a time, each dot summed in channel order, so
// the result equals one key at a time to the bit while the eight sums run in parallel.
template <class T>
void plain_dots(T* p, const SeqHead<T>& sh, int i) {
  constexpr int kKeys = 8;
  const T* q = sh.q(i);
  const int hd = sh.hd;
  int j = 0;
  for (; j + kKeys - 1 <= i; j += kKeys) {
    const T* k[kKeys];
    T acc[kKeys];
    for (int u = 0; u < kKeys; ++u) {
      k[u] = sh.k(j + u);
      acc[u] = 0;
    }
    for (int c = 0; c < hd; ++c)
      for (int u = 0; u < kKeys; ++u) acc[u] += q[c] * k[u][c];
    for (int u = 0; u < kKeys; ++u) p[j + u] = acc[u];
  }
  for (; j <= i; ++j) {
    const T* kj = sh.k(j);
    T dot = 0;
    for (int c = 0; c < hd; ++c) dot += q[c] * kj[c];
    p[j] = dot;
  }
}

// o [hd] = Σ_{j ≤ i} p_j v_j, each channel summed over j in order. Sixteen channels at a time in
// registers (a fixed-size block the compiler keeps in one vector), the rest one by one.
template <class T>
void weighted_values(T* o, const T* p, const SeqHead<T>& sh, int i) {
  constexpr int kBlock = 16;
  int c0 = 0;
  for (; c0 + kBlock <= sh.hd; c0 += kBlock) {
    T acc[kBlock] = {};
    for (int j = 0; j <= i; ++j) {
      const T* v = sh.v(j) + c0;
      for (int c = 0; c < kBlock; ++c) acc[c] += p[j] * v[c];
    }
    for (int c = 0; c < kBlock; ++c) o[c0 + c] = acc[c];
  }
  for (int c = c0; c < sh.hd; ++c) o[c] = 0;
  for (int j = 0; j <= i && c0 < sh.hd; ++j) {
    const T* v = sh.v(j);
    for (int c = c0; c < sh.hd; ++c) o[c] += p[j] * v[c];
  }
}

// Query i's logits in place: p[j] = q_i·k_j (in) → scale·q_i·k_j + c_s·b[δ_ij] (out; −∞ for keys
// the window hides), with c_s·b[δ] = bias_at(b, δ); returns the largest. b null: no bias.
template <class T, class BiasAt>
T scale_logits(T* p, const SeqHead<T>& sh, const ops::AttentionArgs<T>& a, int i, const T* b,
               BiasAt bias_at) {
  T max_logit = -INFINITY;
  if (a.window.plain()) {  // plain causal attention: no per-key branches
    if (b) {
      for (int j = 0; j <= i; ++j) {
        p[j] = p[j] * sh.scale + bias_at(b, sh.pos[i] - sh.pos[j]);
        max_logit = std::max(max_logit, p[j]);
      }
    } else {
      for (int j = 0; j <= i; ++j) {
        p[j] = p[j] * sh.scale;
        max_logit = std::max(max_logit, p[j]);
      }
    }
    return max_logit;
  }
  for (int j = 0; j <= i; ++j) {
    if (!a.admits(i, j)) {
      p[j] = -INFINITY;  // exp(−∞) = 0 below: the key gets no weight
      continue;
    }
    p[j] = p[j] * sh.scale + (b ? bias_at(b, distance(sh, a, i, j)) : T(0));
    max_logit = std::max(max_logit, p[j]);
  }
  return max_logit;
}

// Query i of one head: probabilities over keys 0..i into p[0..i] (masked keys 0) and the output
// o [hd] = Σ_j p_j v_j.
template <class T>
void attend_row(T* o, T* p, const SeqHead<T>& sh, const ops::AttentionArgs<T>& a, int i) {
  const int half = sh.hd / 2;
  if (a.rope_cos) {
    for (int j = 0; j <= i; ++j) {
      if (!a.admits(i, j)) continue;
      const size_t row = static_cast<size_t>(distance(sh, a, i, j)) * half;
      p[j] = rotated_dot(sh.q(i), sh.k(j), half, a.rope_cos + row, a.rope_sin + row);
    }
  } else {
    plain_dots(p, sh, i);
  }
  const T* b = sh.bias ? sh.bias + a.bias_row(sh.pos[i]) : nullptr;  // b[δ]: query i's bias
  // c_s = 1 keeps the loops that add b[δ] itself: x·1 is x, but a compiler may then fuse the other
  // product into the addition, which rounds q·k·scale + b differently (measured: temperature runs'
  // cross-entropies moved in the 8th digit).
  const T max_logit =
      sh.bias_scale == T(1)
          ? scale_logits(p, sh, a, i, b, [](const T* bias, int delta) { return bias[delta]; })
          : scale_logits(p, sh, a, i, b,
                         [&](const T* bias, int delta) { return sh.bias_scale * bias[delta]; });
  T sum = 0;
  for (int j = 0; j <= i; ++j) {
    p[j] = std::exp(p[j] - max_logit);
    sum += p[j];
  }
  const T inv = T(1) / sum;
  for (int j = 0; j <= i; ++j) p[j] *= inv;
  weighted_values(o, p, sh, i);
}

}  // namespace detail

// Training forward: out [K, N, d] (padding rows 0), att: every (sequence, head)'s probabilities.
template <class T>
void attention_forward(T* out, T* att, const T* qkv, int d, int n_head,
                       const ops::AttentionArgs<T>& a, ops::ProbLayout prob, ops::Seqs q,
                       ops::Models m = {}) {
  const int hd = d / n_head, S = q.n_seq;
  std::fill_n(out, static_cast<size_t>(m.count) * q.rows * d, T(0));
#pragma omp parallel for schedule(dynamic, 4)
  for (int ksh = 0; ksh < m.count * S * n_head; ++ksh) {
    const int k = ksh / (S * n_head), s = (ksh / n_head) % S, h = ksh % n_head;
    const detail::SeqHead<T> sh = detail::seq_head(qkv, q, a, k, s, h, d, n_head);
    const int L = sh.L;
    const size_t row0 = static_cast<size_t>(k) * q.rows + q.offsets[k * (S + 1) + s];
    T* P = att + k * prob.stride + prob.offsets[k * (S + 1) + s] + static_cast<size_t>(h) * L * L;
    for (int i = 0; i < L; ++i) {
      T* p = P + static_cast<size_t>(i) * L;
      if (a.row_read && !a.row_read[row0 + i]) {  // nothing reads it: output and p stay 0
        std::fill_n(p, L, T(0));
        continue;
      }
      detail::attend_row(out + (row0 + i) * d + h * hd, p, sh, a, i);
      for (int j = i + 1; j < L; ++j) p[j] = 0;
    }
  }
}

// dLoss/db from ds = dLoss/ds_ij · c_s (the logits' gradients times the bias's scale; laid out as
// the probabilities): for
// each (model, head), Σ over sequences, queries and admitted keys in that order, into dbias. A
// thread per (model, head), each owning its entries; K models that share one table (bias_stride 0)
// add into the same entries, so there a thread takes a head and its models in order. Either way
// the sums are the same whatever the threads.
template <class T>
void bias_backward(const T* ds, const ops::AttentionArgs<T>& a, ops::ProbLayout prob, ops::Seqs q,
                   int n_head, int K) {
  const int S = q.n_seq;
  auto add_model_head = [&](int k, int h) {
    T* db = a.dbias + static_cast<size_t>(k) * a.bias_stride +
            static_cast<size_t>(h) * a.bias_rows * a.bias_cols;
    const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
    for (int s = 0; s < S; ++s) {
      const int L = off[s + 1] - off[s];
      const int* pos = q.positions + static_cast<size_t>(k) * q.rows + off[s];
      const T* D =
          ds + k * prob.stride + prob.offsets[k * (S + 1) + s] + static_cast<size_t>(h) * L * L;
      for (int i = 0; i < L; ++i) {
        T* row = db + a.bias_row(pos[i]);
        for (int j = 0; j <= i; ++j) {
          if (!a.admits(i, j)) continue;
          row[a.window.capped(pos[i] - pos[j])] += D[static_cast<size_t>(i) * L + j];
        }
      }
    }
  };
  const bool shared = a.bias_stride == 0 && K > 1;
  const int work_items = shared ? n_head : K * n_head;
#pragma omp parallel for schedule(static)
  for (int u = 0; u < work_items; ++u) {
    if (!shared) {
      add_model_head(u / n_head, u % n_head);
      continue;
    }
    for (int k = 0; k < K; ++k) add_model_head(k, u);
  }
}

// Adds into dqkv [K, N, 3d] (and into a.dbias when set). Needs the forward's qkv and att.
// scratch [K·prob.stride]: with a.dbias, the logits' gradients times the bias's scale c_s, for
// bias_backward; otherwise unused on the CPU (the CUDA backend's workspace) and may be null.
template <class T>
void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* att, int d,
                        int n_head, const ops::AttentionArgs<T>& a, ops::ProbLayout prob,
                        ops::Seqs q, ops::Models m = {}) {
  T* ds_keep = a.dbias ? scratch : nullptr;
  const int hd = d / n_head, C3 = 3 * d, S = q.n_seq, half = hd / 2;
#pragma omp parallel
  {
    std::vector<T> dp;                 // dL/dp_ij for one query row
    std::vector<T> discard(hd, T(0));  // where a detached key's gradient goes
#pragma omp for schedule(dynamic, 4)
    for (int ksh = 0; ksh < m.count * S * n_head; ++ksh) {
      const int k = ksh / (S * n_head), s = (ksh / n_head) % S, h = ksh % n_head;
      const detail::SeqHead<T> sh = detail::seq_head(qkv, q, a, k, s, h, d, n_head);
      const int L = sh.L;
      const size_t row0 = static_cast<size_t>(k) * q.rows + q.offsets[k * (S + 1) + s];
      auto detached = [&](int j) { return a.row_detached && a.row_detached[row0 + j]; };
      const T* P =
          att + k * prob.stride + prob.offsets[k * (S + 1) + s] + static_cast<size_t>(h) * L * L;
      T* g = dqkv + row0 * C3 + h * hd;  // the sequence's first row, this head's columns
      T* DS = ds_keep ? ds_keep + (P - att) : nullptr;  // this block of the logits' gradients
      dp.resize(L);
      for (int i = 0; i < L; ++i) {
        if (DS) std::fill_n(DS + static_cast<size_t>(i) * L, L, T(0));
        if (a.row_read && !a.row_read[row0 + i]) continue;  // p_i = 0: no gradient
        const T* p = P + static_cast<size_t>(i) * L;
        const T* dout_i = dout + (row0 + i) * d + h * hd;
        // A detached row with do_i = 0 adds 0 to its dq and (detached) nothing to dk, dv.
        if (detached(i) && std::all_of(dout_i, dout_i + hd, [](T x) { return x == T(0); }))
          continue;
        T* dq = g + static_cast<size_t>(i) * C3;
        // o_i = Σ_j p_ij v_j  =>  dp_ij = do_i·v_j,  dv_j += p_ij do_i
        T dot_pdp = 0;
        for (int j = 0; j <= i; ++j) {
          const T* v = sh.v(j);
          T* dv = g + static_cast<size_t>(j) * C3 + 2 * d;
          T acc = 0;
          for (int c = 0; c < hd; ++c) acc += dout_i[c] * v[c];
          if (!detached(j))
            for (int c = 0; c < hd; ++c) dv[c] += p[j] * dout_i[c];
          dp[j] = acc;
          dot_pdp += p[j] * acc;
        }
        // p_i = softmax(s_i)  =>  ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik)   (0 for masked keys)
        // s_ij = scale·q_i·k_j + c_s·b_ij  =>  dq_i += scale·ds_ij k_j,  dk_j += scale·ds_ij q_i,
        // db_ij += c_s·ds_ij (bias_backward, from DS)
        const T* qi = sh.q(i);
        for (int j = 0; j <= i; ++j) {
          const T ds_logit = p[j] * (dp[j] - dot_pdp);
          if (DS) DS[static_cast<size_t>(i) * L + j] = ds_logit * sh.bias_scale;
          const T ds = ds_logit * sh.scale;
          const T* kj = sh.k(j);
          // A detached key's gradient goes nowhere: a scratch row takes it (the same arithmetic
          // for dq either way).
          T* dk = detached(j) ? discard.data() : g + static_cast<size_t>(j) * C3 + d;
          if (a.rope_cos) {  // s_ij = scale·rotated_dot(q_i, k_j, δ_ij) + bias
            if (!a.admits(i, j)) continue;
            const size_t row = static_cast<size_t>(detail::distance(sh, a, i, j)) * half;
            const T* cs = a.rope_cos + row;
            const T* sn = a.rope_sin + row;
            for (int mm = 0; mm < half; ++mm) {
              const T q0 = qi[2 * mm], q1 = qi[2 * mm + 1], k0 = kj[2 * mm], k1 = kj[2 * mm + 1];
              dq[2 * mm] += ds * (cs[mm] * k0 + sn[mm] * k1);
              dq[2 * mm + 1] += ds * (cs[mm] * k1 - sn[mm] * k0);
              dk[2 * mm] += ds * (cs[mm] * q0 - sn[mm] * q1);
              dk[2 * mm + 1] += ds * (cs[mm] * q1 + sn[mm] * q0);
            }
            continue;
          }
          for (int c = 0; c < hd; ++c) {
            dq[c] += ds * kj[c];
            dk[c] += ds * qi[c];
          }
        }
      }
    }
  }
  if (a.dbias) bias_backward(ds_keep, a, prob, q, n_head, m.count);
}

}  // namespace lenlab::cpu
