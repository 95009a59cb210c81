#pragma once
// VCL's random prefix (train/vcl.hpp; paper 004, App. H.1), one feature of one model's packed
// batch at a time, written once for both backends (models/cpu/prefix_noise.hpp runs it per (model,
// feature) on the host, models/cuda/prefix_noise.cu in a thread each). Row codes [K, N]: kNoiseRow
// rows are replaced, kStatsRow rows give the statistics, others pass through. For sequence s and
// feature c, over the stats rows of the model's OTHER sequences (n of them):
//   μ_c = Σ x_ic / n,  σ_c = sqrt(Σ (x_ic − μ_c)² / n + ε),  out_rc = μ_c + σ_c·noise_rc
// (out = x elsewhere). Not over s's own rows: they hold the tokens s goes on to predict, and their
// mean embedding carried enough of them to train a Markov model below the chain's entropy (the
// first measurement of docs/methods.md's VCL section). A sequence with no other stats rows (a
// batch of one) passes through whole. The backward is the derivative of that, through μ and σ, so
// it is checked by finite differences as any op.
#include <math.h>

#include <cstddef>

#include "models/ops/args.hpp"

namespace lenlab::ops {

enum PrefixNoiseCode : int { kPassRow = 0, kNoiseRow = 1, kStatsRow = 2 };
// Keeps σ finite and its derivative bounded when the stats rows agree (one row, say).
inline constexpr double kPrefixNoiseEps = 1e-12;

// Feature c of model k of x [K, N, d] (noise alike), sequence by sequence.
template <class T>
struct NoiseFeature {
  const T* x;
  const T* noise;
  const int* codes;
  Seqs q;
  size_t k;
  int d, c;
  // Sums over stats rows, of x − shift and its square (shift: the first stats row's value, so
  // that the variance is a difference of small numbers), and their count.
  struct Sums {
    int n = 0;
    T sum = 0, squares = 0;
  };
  T shift = 0;
  Sums all;

  LENLAB_HOST_DEVICE size_t first(int s) const {
    return k * q.rows + q.offsets[k * (q.n_seq + 1) + s];
  }
  LENLAB_HOST_DEVICE size_t end(int s) const {
    return k * q.rows + q.offsets[k * (q.n_seq + 1) + s + 1];
  }
  LENLAB_HOST_DEVICE T at(size_t r) const { return x[r * d + c]; }
  LENLAB_HOST_DEVICE Sums own(int s) const {
    Sums o;
    for (size_t r = first(s); r < end(s); ++r)
      if (codes[r] == kStatsRow) {
        ++o.n;
        o.sum += at(r) - shift;
        o.squares += (at(r) - shift) * (at(r) - shift);
      }
    return o;
  }
  LENLAB_HOST_DEVICE void measure() {
    bool found = false;
    for (int s = 0; s < q.n_seq && !found; ++s)
      for (size_t r = first(s); r < end(s) && !found; ++r)
        if (codes[r] == kStatsRow) {
          shift = at(r);
          found = true;
        }
    for (int s = 0; s < q.n_seq; ++s) {
      const Sums o = own(s);
      all.n += o.n;
      all.sum += o.sum;
      all.squares += o.squares;
    }
  }
  // μ and σ for sequence s (over the others' stats rows); false when there are none.
  LENLAB_HOST_DEVICE bool others(int s, T& mean, T& sigma, int& n) const {
    const Sums o = own(s);
    n = all.n - o.n;
    if (n <= 0) return false;
    const T m = (all.sum - o.sum) / static_cast<T>(n);
    T var = (all.squares - o.squares) / static_cast<T>(n) - m * m;
    var = var > T(0) ? var : T(0);
    mean = shift + m;
    sigma = sqrt(var + static_cast<T>(kPrefixNoiseEps));
    return true;
  }
  // out [K, N, d]: the feature's rows of every sequence.
  LENLAB_HOST_DEVICE void forward(T* out) const {
    for (int s = 0; s < q.n_seq; ++s) {
      T mean = 0, sigma = 0;
      int n = 0;
      const bool replace = others(s, mean, sigma, n);
      for (size_t r = first(s); r < end(s); ++r)
        out[r * d + c] = replace && codes[r] == kNoiseRow ? mean + sigma * noise[r * d + c] : at(r);
    }
  }
  // Sequence s's part of the backward: a = dμ/n and b = dσ/(n·σ), with dμ = Σ_noise dout_r and
  // dσ = Σ_noise dout_r·noise_r; 0 when it has nothing to replace.
  LENLAB_HOST_DEVICE void coefficients(const T* dout, int s, T& a, T& b, T& mean) const {
    T sigma = 0;
    int n = 0;
    a = b = mean = 0;
    if (!others(s, mean, sigma, n)) return;
    T dmean = 0, dsigma = 0;
    for (size_t r = first(s); r < end(s); ++r)
      if (codes[r] == kNoiseRow) {
        dmean += dout[r * d + c];
        dsigma += dout[r * d + c] * noise[r * d + c];
      }
    a = dmean / static_cast<T>(n);
    b = dsigma / (static_cast<T>(n) * sigma);
  }
  // Adds dLoss/dx into dx from dout: dout itself at the rows not replaced, and at a stats row x_i
  // of sequence t, Σ_{s ≠ t} a_s + b_s·(x_i − μ_s) (the sequences whose noise it shaped).
  LENLAB_HOST_DEVICE void backward(T* dx, const T* dout) const {
    T A = 0, B = 0, C = 0;  // Σ_s a_s, Σ_s b_s, Σ_s b_s·μ_s
    for (int s = 0; s < q.n_seq; ++s) {
      T a, b, mean;
      coefficients(dout, s, a, b, mean);
      A += a;
      B += b;
      C += b * mean;
    }
    for (int t = 0; t < q.n_seq; ++t) {
      T a, b, mean, sigma = 0;
      int n = 0;
      coefficients(dout, t, a, b, mean);
      const bool replaced = others(t, mean, sigma, n);
      for (size_t r = first(t); r < end(t); ++r) {
        if (replaced && codes[r] == kNoiseRow) continue;
        T g = dout[r * d + c];
        if (codes[r] == kStatsRow) g += (A - a) + at(r) * (B - b) - (C - b * mean);
        dx[r * d + c] += g;
      }
    }
  }
};

// Feature c of model k's packed batch, measured.
template <class T>
LENLAB_HOST_DEVICE NoiseFeature<T> noise_feature(const T* x, const T* noise, const int* codes,
                                                 const Seqs& q, size_t k, int d, int c) {
  NoiseFeature<T> f{x, noise, codes, q, k, d, c, T(0), typename NoiseFeature<T>::Sums{}};
  f.measure();
  return f;
}

}  // namespace lenlab::ops
