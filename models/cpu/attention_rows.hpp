#pragma once
// The row path of causal attention: one query row of one head at a time, over packed sequences.
//   qkv [K, N, 3d]: row t = [q | k | v], head h owns columns h·hd .. (h+1)·hd of each third.
// Used by the training forward for short sequences and RoPE bent inside attention
// (models/cpu/attention.hpp), by the inference forward for a few rows (models/cpu/
// attention_infer.hpp); models/cpu/attention_tiles.hpp has the tiled path for long sequences.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

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

}  // namespace lenlab::cpu
