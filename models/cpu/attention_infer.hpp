#pragma once
// The inference forward of attention (models/cpu/attention.hpp has the training one): nothing is
// kept for a backward, and memory is linear in the length.
//   * Every row queried (query_rows null: the blocks below the last): each (sequence, head) in
//     tiles of kTile query rows. A tile's logits [kTile, keys] are one matrix product, its outputs
//     another; the softmax runs per row, vectorised. Only a tile's logits are ever held, never
//     the [L, L] matrix.
//   * Some rows queried (the last block, at the rows the heads read): one row at a time, with the
//     training forward's attend_row.
// RoPE applied inside attention (a distance cap bends its angle) takes attend_row in both cases:
// its logits are no plain product. The results equal the training forward's up to float rounding
// (the products sum in another order); bit-exact for the row path.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "models/cpu/attention.hpp"
#include "models/cpu/eigen_maps.hpp"

namespace lenlab::cpu {

namespace detail {

// The tiles' scratch: aligned to Eigen's largest packet, so that where a row's vectorised sum
// starts its aligned part depends on the row's offset only, never on where the heap put the
// buffer (with a plain std::vector the sums, and so the results, changed in the last bits when
// runs evaluated side by side).
template <class T>
using Scratch = std::vector<T, Eigen::aligned_allocator<T>>;

// Query rows per tile: large enough that the two products run at GEMM speed, small enough that
// a tile's logits ([kTile, L] floats) stay in cache for lengths in the hundreds.
inline constexpr int kTile = 64;

// Row p [0..m) of logits q_i·k_j for the keys j < m = i + 1 → the probabilities of query i
// (masked keys 0), as attend_row computes them but vectorised over the keys.
template <class T>
void softmax_row(T* p, const T* pos, const SeqHead<T>& sh, const ops::AttentionArgs<T>& a, int i) {
  using Row = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
  const int m = i + 1;
  Row row(p, m);
  if (a.n_local <= 0 && a.max_distance <= 0) {  // plain causal attention: no per-key branches
    row *= sh.scale;
    // −slope·(pos_i − pos_j) = slope·(pos_j − pos_i)
    if (sh.slope != 0)
      row += sh.slope * (Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>(pos, m) - pos[i]);
    row = (row - row.maxCoeff()).exp();
  } else {
    T max_logit = -INFINITY;
    for (int j = 0; j < m; ++j) {
      if (!a.admits(i, j)) continue;
      p[j] = p[j] * sh.scale - sh.slope * static_cast<T>(distance(sh, a, i, j));
      max_logit = std::max(max_logit, p[j]);
    }
    for (int j = 0; j < m; ++j) p[j] = a.admits(i, j) ? std::exp(p[j] - max_logit) : T(0);
  }
  row *= T(1) / row.sum();
}

// st[0], st[1] = the entropy (nats) and the largest of the probabilities p[0..m).
template <class T>
void write_row_stats(T* st, const T* p, int m) {
  T entropy = 0, largest = 0;
  for (int j = 0; j < m; ++j) {
    if (p[j] > 0) entropy -= p[j] * std::log(p[j]);
    largest = std::max(largest, p[j]);
  }
  st[0] = entropy;
  st[1] = largest;
}

// Every query row of one head of one sequence: out [L, hd] at row stride d (the sequence's first
// row, head h's columns); with stats (row 0's pair, rows stats_stride apart), each row's entropy
// and largest probability. scratch: kTile·L logits and L positions.
template <class T>
void attend_all_rows(T* out, T* stats, size_t stats_stride, Scratch<T>& scratch,
                     const SeqHead<T>& sh, const ops::AttentionArgs<T>& a) {
  using Stride = Eigen::OuterStride<>;
  using ConstStrided = Eigen::Map<const RowMatrix<T>, 0, Stride>;
  const int L = sh.L, hd = sh.hd, d = sh.d;
  scratch.resize(static_cast<size_t>(kTile + 1) * L);
  T* pos = scratch.data() + static_cast<size_t>(kTile) * L;
  for (int j = 0; j < L; ++j) pos[j] = static_cast<T>(sh.pos[j]);
  for (int i0 = 0; i0 < L; i0 += kTile) {
    const int t = std::min(kTile, L - i0), n = i0 + t;  // query rows i0..n−1 see keys 0..n−1
    Eigen::Map<RowMatrix<T>> P(scratch.data(), t, n);
    // S [t, n] = Q_tile [t, hd] · K [n, hd]ᵀ   (rows of q, k, v are 3d apart)
    P.noalias() = ConstStrided(sh.q(i0), t, hd, Stride(3 * d)) *
                  ConstStrided(sh.k(0), n, hd, Stride(3 * d)).transpose();
    for (int r = 0; r < t; ++r) {
      T* p = P.row(r).data();
      softmax_row(p, pos, sh, a, i0 + r);
      std::fill(p + i0 + r + 1, p + n, T(0));  // keys after the query: causal mask
      if (stats) write_row_stats(stats + (i0 + r) * stats_stride, p, i0 + r + 1);
    }
    // O_tile [t, hd] = P [t, n] · V [n, hd]
    Eigen::Map<RowMatrix<T>, 0, Stride>(out + static_cast<size_t>(i0) * d, t, hd, Stride(d))
        .noalias() = P * ConstStrided(sh.v(0), n, hd, Stride(3 * d));
  }
}

}  // namespace detail

// Inference forward: out [K, Q, d] = attention outputs at the query rows `query_rows` [K, Q]
// (model k's rows; < 0: padding, output 0), or at every row when query_rows is null (Q = N;
// padding rows 0); a.row_stats [K, Q, n_head, 2] when set.
template <class T>
void attention_infer(T* out, const T* qkv, const int* query_rows, int Q, int d, int n_head,
                     const ops::AttentionArgs<T>& a, ops::Seqs q, ops::Models m = {}) {
  const int hd = d / n_head, S = q.n_seq;
  const size_t st_row = static_cast<size_t>(n_head) * 2;  // row_stats per query row
  if (!query_rows && !a.rope_cos) {
    for (int k = 0; k < m.count; ++k) {  // padding rows past each model's last sequence
      const int end = q.offsets[static_cast<size_t>(k) * (S + 1) + S];
      std::fill(out + (static_cast<size_t>(k) * q.rows + end) * d,
                out + static_cast<size_t>(k + 1) * q.rows * d, T(0));
      if (a.row_stats)
        std::fill(a.row_stats + (static_cast<size_t>(k) * q.rows + end) * st_row,
                  a.row_stats + static_cast<size_t>(k + 1) * q.rows * st_row, T(0));
    }
#pragma omp parallel
    {
      detail::Scratch<T> scratch;
#pragma omp for schedule(dynamic, 1)
      for (int ksh = 0; ksh < m.count * S * n_head; ++ksh) {
        const int k = ksh / (S * n_head), s = (ksh / n_head) % S, h = ksh % n_head;
        const detail::SeqHead<T> sh = detail::seq_head(qkv, q, a, k, s, h, d, n_head);
        if (sh.L == 0) continue;
        const size_t row0 = static_cast<size_t>(k) * q.rows + q.offsets[k * (S + 1) + s];
        detail::attend_all_rows(out + row0 * d + h * hd,
                                a.row_stats ? a.row_stats + row0 * st_row + 2 * h : nullptr, st_row,
                                scratch, sh, a);
      }
    }
    return;
  }
#pragma omp parallel
  {
    std::vector<T> p;
#pragma omp for schedule(dynamic, 16)
    for (int kq = 0; kq < m.count * Q; ++kq) {
      const int k = kq / Q, qi = kq % Q;
      T* o = out + static_cast<size_t>(kq) * d;
      const int r = query_rows ? query_rows[kq] : qi;
      const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
      T* st = a.row_stats ? a.row_stats + static_cast<size_t>(kq) * st_row : nullptr;
      if (r < 0 || r >= off[S]) {
        std::fill_n(o, d, T(0));
        if (st) std::fill_n(st, st_row, T(0));
        continue;
      }
      const int s = static_cast<int>(std::upper_bound(off, off + S + 1, r) - off) - 1;
      for (int h = 0; h < n_head; ++h) {
        const detail::SeqHead<T> sh = detail::seq_head(qkv, q, a, k, s, h, d, n_head);
        p.resize(sh.L);
        detail::attend_row(o + h * hd, p.data(), sh, a, r - off[s]);
        if (st) detail::write_row_stats(st + 2 * h, p.data(), r - off[s] + 1);
      }
    }
  }
}

}  // namespace lenlab::cpu
