#pragma once
// The inference forward of attention (models/cpu/attention.hpp has the training one): nothing is
// kept for a backward, and memory is linear in the length.
//   * Every row queried (query_rows null: the blocks below the last): each (sequence, head) in
//     tiles of kTile query rows. A tile's logits [kTile, keys] are one matrix product, its outputs
//     another; the softmax runs per row, vectorised. Only a tile's logits are ever held, never
//     the [L, L] matrix.
//   * Some rows queried (the last block, at the rows the heads read): a sequence's query rows in
//     tiles the same way when there are many (a token task's answer rows), one row at a time with
//     the training forward's attend_row when there are few (a scalar task's EOS row).
// RoPE applied inside attention (a distance cap bends its angle) takes attend_row in every case:
// its logits are no plain product. The results equal the training forward's up to float rounding
// (the products sum in another order); bit-exact for the row path.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "models/cpu/attention_rows.hpp"
#include "models/cpu/attention_tiles.hpp"
#include "models/cpu/eigen_maps.hpp"

namespace lenlab::cpu {

namespace detail {

// Fewer query rows of one sequence than this go one row at a time, so that a scalar task's one row
// per sequence keeps the row path (and its time, measured unchanged). 8 is a round threshold,
// not a tuned one.
inline constexpr int kMinTileRows = 8;

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

// Query rows `rows` [n_rows] (ascending, within the sequence; null: every row 0..L−1) of one head
// of one sequence: out [n_rows, hd] at row stride d (head h's columns of the first output row);
// with stats (the first row's pair, rows stats_stride apart), each row's entropy and largest
// probability. scratch: kTile·L logits, L unused and kTile·hd gathered queries.
template <class T>
void attend_rows(T* out, T* stats, size_t stats_stride, Scratch<T>& scratch, const SeqHead<T>& sh,
                 const ops::AttentionArgs<T>& a, const int* rows = nullptr, int n_rows = -1) {
  const int L = sh.L, hd = sh.hd, d = sh.d, R = rows ? n_rows : L;
  scratch.resize(static_cast<size_t>(kTile + 1) * L + static_cast<size_t>(kTile) * hd);
  // [kTile, hd] the tile's queries, when they are not consecutive rows. They start L past the
  // logits (a slot once used for the positions): where they sit decides how Eigen's small products
  // vectorise their sums, so moving them would move the results' last bits.
  T* gathered = scratch.data() + static_cast<size_t>(kTile + 1) * L;
  const auto row = [rows](int r) { return rows ? rows[r] : r; };
  for (int r0 = 0; r0 < R; r0 += kTile) {
    const int t = std::min(kTile, R - r0), n = row(r0 + t - 1) + 1;  // keys 0..n−1
    Eigen::Map<RowMatrix<T>> P(scratch.data(), t, n);
    // S [t, n] = Q_tile [t, hd] · K [n, hd]ᵀ   (rows of q, k, v are 3d apart)
    const auto K = ConstStrided<T>(sh.k(0), n, hd, Stride(3 * d));
    if (rows) {
      for (int r = 0; r < t; ++r) std::copy_n(sh.q(row(r0 + r)), hd, gathered + r * hd);
      P.noalias() = ConstStrided<T>(gathered, t, hd, Stride(hd)) * K.transpose();
    } else {
      P.noalias() = ConstStrided<T>(sh.q(r0), t, hd, Stride(3 * d)) * K.transpose();
    }
    for (int r = 0; r < t; ++r) {
      T* p = P.row(r).data();
      const int i = row(r0 + r);
      softmax_row(p, sh, a, i);
      std::fill(p + i + 1, p + n, T(0));  // keys after the query: causal mask
      if (stats) write_row_stats(stats + (r0 + r) * stats_stride, p, i + 1);
    }
    // O_tile [t, hd] = P [t, n] · V [n, hd]
    Eigen::Map<RowMatrix<T>, 0, Stride>(out + static_cast<size_t>(r0) * d, t, hd, Stride(d))
        .noalias() = P * ConstStrided<T>(sh.v(0), n, hd, Stride(3 * d));
  }
}

// A model's query rows that fall in one sequence, consecutive in the query list and ascending:
// query indices q_begin..q_end−1 of model k, all in its sequence s.
struct QueryGroup {
  int k = 0, s = 0, q_begin = 0, q_end = 0;
};

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
        detail::attend_rows(out + row0 * d + h * hd,
                            a.row_stats ? a.row_stats + row0 * st_row + 2 * h : nullptr, st_row,
                            scratch, sh, a);
      }
    }
    return;
  }
  // The query rows, grouped by sequence (consecutive queries, ascending rows). A token task reads
  // many rows of each sequence: they go in tiles as above. A group of a few rows (a scalar task
  // reads one per sequence) or RoPE bent inside attention goes one row at a time, unless
  // a.tile_few_rows (decoding).
  std::vector<detail::QueryGroup> groups;
  std::vector<int> local(static_cast<size_t>(m.count) * Q, -1);  // each query's row in its sequence
  for (int k = 0; k < m.count; ++k) {
    const int* off = q.offsets + static_cast<size_t>(k) * (S + 1);
    for (int qi = 0; qi < Q; ++qi) {
      const size_t kq = static_cast<size_t>(k) * Q + qi;
      const int r = query_rows ? query_rows[kq] : qi;
      if (r < 0 || r >= off[S]) {  // padding
        std::fill_n(out + kq * d, d, T(0));
        if (a.row_stats) std::fill_n(a.row_stats + kq * st_row, st_row, T(0));
        continue;
      }
      const int s = static_cast<int>(std::upper_bound(off, off + S + 1, r) - off) - 1;
      local[kq] = r - off[s];
      detail::QueryGroup* g = groups.empty() ? nullptr : &groups.back();
      if (g && g->k == k && g->s == s && g->q_end == qi && local[kq - 1] < local[kq])
        ++g->q_end;
      else
        groups.push_back({k, s, qi, qi + 1});
    }
  }
  const int n_groups = static_cast<int>(groups.size());
#pragma omp parallel
  {
    detail::Scratch<T> scratch;
    std::vector<T> p;
#pragma omp for schedule(dynamic, 4)
    for (int gh = 0; gh < n_groups * n_head; ++gh) {
      const detail::QueryGroup& g = groups[gh / n_head];
      const int h = gh % n_head, n = g.q_end - g.q_begin;
      const detail::SeqHead<T> sh = detail::seq_head(qkv, q, a, g.k, g.s, h, d, n_head);
      const size_t kq0 = static_cast<size_t>(g.k) * Q + g.q_begin;
      T* o = out + kq0 * d + h * hd;
      T* st = a.row_stats ? a.row_stats + kq0 * st_row + 2 * h : nullptr;
      const int* rows = local.data() + kq0;
      if (!a.rope_cos && (n >= detail::kMinTileRows || a.tile_few_rows)) {
        detail::attend_rows(o, st, st_row, scratch, sh, a, rows, n);
        continue;
      }
      p.resize(sh.L);
      for (int r = 0; r < n; ++r) {
        detail::attend_row(o + static_cast<size_t>(r) * d, p.data(), sh, a, rows[r]);
        if (st) detail::write_row_stats(st + r * st_row, p.data(), rows[r] + 1);
      }
    }
  }
}

}  // namespace lenlab::cpu
