#pragma once
// The tiled path of causal attention: a (sequence, head) block in tiles of kTile query rows, whose
// logits and outputs are matrix products (Q_tile·Kᵀ, P_tile·V) and whose softmax runs per row,
// vectorised. The training forward and backward take it for sequences of at least
// kMinTiledLength tokens (models/cpu/attention.hpp); the inference forward for every row and for
// many query rows (models/cpu/attention_infer.hpp). The results equal the row path's
// (models/cpu/attention_rows.hpp) up to float rounding: the products sum in another order.
// Shapes: qkv rows 3d apart (SeqHead), out and dout rows d apart, P [L, L] row-major.
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

#include "models/cpu/attention_rows.hpp"
#include "models/cpu/blas_gemm.hpp"
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

// The training forward and backward tile a (sequence, head) block of at least this many tokens;
// shorter ones go row by row. lenlab_bench's attention table (docs/engine.md) has the tiles
// 1.2-1.4x the rows at 16 tokens, 1.8x at 32, 2.9x at 128 and slower at 8; 32 keeps the paper's
// scalar tasks (l_train ≤ 20: at most 22 tokens) on the row path, so their runs keep their bits.
inline constexpr int kMinTiledLength = 32;

// The length from which blocks are tiled: kMinTiledLength, unless a benchmark or a test set
// another to run both paths on the same blocks (0: every block; INT_MAX: none). Set it outside
// any parallel region; the kernels only read it.
inline int& min_tiled_length() {
  static int length = kMinTiledLength;
  return length;
}

// Whether the training forward and backward tile this block: long enough, and logits that are a
// plain product (RoPE bent inside attention rotates each pair by its distance: the row path).
template <class T>
bool tiled(const SeqHead<T>& sh, const ops::AttentionArgs<T>& a) {
  return sh.L >= min_tiled_length() && !a.rope_cos;
}

using Stride = Eigen::OuterStride<>;
template <class T>
using Strided = Eigen::Map<RowMatrix<T>, 0, Stride>;
template <class T>
using ConstStrided = Eigen::Map<const RowMatrix<T>, 0, Stride>;

// C [M, N] (rows ldc apart) = beta·C + op(A)·op(B), op(A) [M, K] (A [M, K], or [K, M] with ta;
// rows lda apart), likewise op(B) [K, N]: the training tiles' products, on OpenBLAS's sgemm where
// the float products run on it (models/cpu/blas_gemm.hpp: 1.7× Eigen's on this kind of core),
// on Eigen's product otherwise and in double.
template <class T>
void tile_product(bool ta, bool tb, int M, int N, int K, const T* A, int lda, const T* B, int ldb,
                  T beta, T* C, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (gemm_kernel() == GemmKernel::kOpenBlas) {
      blas_sgemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
      return;
    }
  }
  Strided<T> c(C, M, N, Stride(ldc));
  const auto a = [&](auto&& op) {
    const auto b = [&](auto&& opb) {
      if (beta == T(0))
        c.noalias() = op * opb;
      else
        c.noalias() += op * opb;  // beta 1: the tiles only add
    };
    if (tb)
      b(ConstStrided<T>(B, N, K, Stride(ldb)).transpose());
    else
      b(ConstStrided<T>(B, K, N, Stride(ldb)));
  };
  if (ta)
    a(ConstStrided<T>(A, K, M, Stride(lda)).transpose());
  else
    a(ConstStrided<T>(A, M, K, Stride(lda)));
}

// Row p [0..m) of logits q_i·k_j for the keys j < m = i + 1 → the probabilities of query i
// (masked keys 0), as attend_row computes them but vectorised over the keys.
template <class T>
void softmax_row(T* p, const SeqHead<T>& sh, const ops::AttentionArgs<T>& a, int i) {
  using Row = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
  const int m = i + 1;
  Row row(p, m);
  const T* b = sh.bias ? sh.bias + a.bias_row(sh.pos[i]) : nullptr;  // b[δ]: query i's bias
  // One sequence of operations for every mask and cap, so that a window or cap that excludes no
  // key gives plain attention's very bits (tested): scale, bias, the vectorised exp, normalise.
  // Masked keys enter the exp as −∞ and leave as exact zeros.
  const bool plain = a.window.plain();  // no per-key branches
  row *= sh.scale;
  if (plain) {
    if (b)
      for (int j = 0; j < m; ++j) p[j] += sh.scaled_bias(b, sh.pos[i] - sh.pos[j]);
  } else {
    for (int j = 0; j < m; ++j)
      if (!a.admits(i, j))
        p[j] = -std::numeric_limits<T>::infinity();
      else if (b)
        p[j] += sh.scaled_bias(b, distance(sh, a, i, j));
  }
  row = (row - row.maxCoeff()).exp();
  if (!plain)
    for (int j = 0; j < m; ++j)
      if (!a.admits(i, j)) p[j] = T(0);
  row *= T(1) / row.sum();
}

// Training forward of one (sequence, head) block in tiles: P [L, L] the probabilities (rows nothing
// reads, read[i] = 0, and keys after each query 0), out [L, hd] at row stride d (rows not read 0).
// read: the block's rows' AttentionArgs::row_read, or null (every row read).
template <class T>
void forward_tiles(T* out, T* P, const SeqHead<T>& sh, const ops::AttentionArgs<T>& a,
                   const int* read) {
  const int L = sh.L, hd = sh.hd, d = sh.d;
  for (int r0 = 0; r0 < L; r0 += kTile) {
    const int t = std::min(kTile, L - r0), n = r0 + t;  // query rows r0.., keys 0..n−1
    T* S = P + static_cast<size_t>(r0) * L;             // [t, n], rows L apart
    tile_product(false, true, t, n, hd, sh.q(r0), 3 * d, sh.k(0), 3 * d, T(0), S, L);  // Q·Kᵀ
    for (int r = 0; r < t; ++r) {
      const int i = r0 + r;
      T* p = P + static_cast<size_t>(i) * L;
      if (read && !read[i])
        std::fill_n(p, L, T(0));  // its output is 0·V below
      else {
        softmax_row(p, sh, a, i);
        std::fill(p + i + 1, p + L, T(0));  // keys after the query: causal mask
      }
    }
    // O_tile [t, hd] = P_tile [t, n] · V [n, hd]
    tile_product(false, false, t, hd, n, S, L, sh.v(0), 3 * d, T(0),
                 out + static_cast<size_t>(r0) * d, d);
  }
}

// Training backward of one (sequence, head) block in tiles, from the forward's P [L, L]:
//   dP = dO·Vᵀ,  dV = Pᵀ·dO,  dS_ij = p_ij (dP_ij − Σ_k p_ik dP_ik),
//   dQ += scale·dS·K,  dK = scale·dSᵀ·Q,  and DS = c_s·dS when DS is set (for bias_backward).
// g: dqkv at the block's first row, head h's columns (rows 3d apart); dout [L, hd] rows d apart.
// dK and dV are summed in scratch and added to the rows that are not detached (detached[j] set:
// its key and value pass no gradient). Rows nothing reads have P = 0, so dS = 0 there.
template <class T>
void backward_tiles(T* g, T* DS, Scratch<T>& scratch, const T* dout, const T* P,
                    const SeqHead<T>& sh, const int* detached) {
  const int L = sh.L, hd = sh.hd, d = sh.d;
  scratch.resize(static_cast<size_t>(kTile) * L + 2 * static_cast<size_t>(L) * hd);
  T* dS = scratch.data();                                   // [t, n] of the tile, rows n apart
  T* dK = scratch.data() + static_cast<size_t>(kTile) * L;  // [L, hd]
  T* dV = dK + static_cast<size_t>(L) * hd;                 // [L, hd]
  std::fill(dK, dV + static_cast<size_t>(L) * hd, T(0));
  for (int r0 = 0; r0 < L; r0 += kTile) {
    const int t = std::min(kTile, L - r0), n = r0 + t;
    const T* Pt = P + static_cast<size_t>(r0) * L;  // [t, n], rows L apart
    const T* dO = dout + static_cast<size_t>(r0) * d;
    tile_product(false, true, t, n, hd, dO, d, sh.v(0), 3 * d, T(0), dS, n);  // dP = dO·Vᵀ
    tile_product(true, false, n, hd, t, Pt, L, dO, d, T(1), dV, hd);          // dV += Pᵀ·dO
    for (int r = 0; r < t; ++r) {
      const int i = r0 + r;
      const T* p = Pt + static_cast<size_t>(r) * L;
      T* ds = dS + static_cast<size_t>(r) * n;
      T dot = 0;  // Σ_j p_ij dP_ij, in key order
      for (int j = 0; j <= i; ++j) dot += p[j] * ds[j];
      for (int j = 0; j <= i; ++j) ds[j] = p[j] * (ds[j] - dot);
      std::fill(ds + i + 1, ds + n, T(0));
      if (DS) {
        T* row = DS + static_cast<size_t>(i) * L;
        for (int j = 0; j <= i; ++j) row[j] = ds[j] * sh.bias_scale;
        std::fill(row + i + 1, row + L, T(0));
      }
      for (int j = 0; j <= i; ++j) ds[j] *= sh.scale;
    }
    tile_product(false, false, t, hd, n, dS, n, sh.k(0), 3 * d, T(1),
                 g + static_cast<size_t>(r0) * 3 * d, 3 * d);                   // dQ += dS·K
    tile_product(true, false, n, hd, t, dS, n, sh.q(r0), 3 * d, T(1), dK, hd);  // dK += dSᵀ·Q
  }
  for (int j = 0; j < L; ++j) {
    if (detached && detached[j]) continue;
    T* gk = g + static_cast<size_t>(j) * 3 * d + d;
    const T* dk = dK + static_cast<size_t>(j) * hd;
    for (int c = 0; c < hd; ++c) gk[c] += dk[c];
    T* gv = gk + d;
    const T* dv = dV + static_cast<size_t>(j) * hd;
    for (int c = 0; c < hd; ++c) gv[c] += dv[c];
  }
}

}  // namespace detail

}  // namespace lenlab::cpu
