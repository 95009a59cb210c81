#pragma once
// Multi-head causal self-attention over packed sequences, training: the forward keeps each
// (sequence, head)'s probabilities for the backward (ops::ProbLayout).
//   qkv [K, N, 3d]: row t = [q | k | v], head h owns columns h·hd .. (h+1)·hd of each third.
//   out: the heads' outputs side by side (before the output projection).
// Logits, masks, the positional bias, distance caps and RoPE-by-distance: ops::AttentionArgs. A
// (sequence, head) block goes one query row at a time (models/cpu/attention_rows.hpp) when short,
// in tiles of matrix products when long (models/cpu/attention_tiles.hpp, detail::tiled). The
// inference forward keeps nothing (models/cpu/attention_infer.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/cpu/attention_rows.hpp"
#include "models/cpu/attention_tiles.hpp"
#include "models/ops/args.hpp"
#include "models/ops/tables.hpp"

namespace lenlab::cpu {

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
    T* o = out + row0 * d + h * hd;
    const int* read = a.row_read ? a.row_read + row0 : nullptr;
    if (detail::tiled(sh, a)) {
      detail::forward_tiles(o, P, sh, a, read);
      continue;
    }
    for (int i = 0; i < L; ++i) {
      T* p = P + static_cast<size_t>(i) * L;
      if (read && !read[i]) {  // nothing reads it: output and p stay 0
        std::fill_n(p, L, T(0));
        continue;
      }
      detail::attend_row(o + static_cast<size_t>(i) * d, p, sh, a, i);
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
    detail::Scratch<T> scratch_tiles;  // the tiled path's dP tile and dK, dV sums
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
      if (detail::tiled(sh, a)) {
        detail::backward_tiles(g, DS, scratch_tiles, dout + row0 * d + h * hd, P, sh,
                               a.row_detached ? a.row_detached + row0 : nullptr);
        continue;
      }
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
