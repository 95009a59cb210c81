#pragma once
// What every row of the backend test table (tests/backend_cases.hpp) is built from: a case's host
// data in double, what it returns, a backend's buffers (On<B>), and K models' packed batches.
//
// A case is a struct with the row's sizes and options as fields, and:
//   std::string op() const;    the op it tests ("linear"): one test case per op and backend
//   std::string name() const;  the row, in words (also its seed)
//   Tolerance tol;             a float backend against CpuBackend<double>
//   bool fd;                   check the backward by finite differences (off for large rows)
//   Host make() const;         deterministic inputs, and what the finite differences vary
//   template <class B> Outputs run(const Host&) const;   upload, forward (+ backward), download
// and optionally:
//   void check(const Host&, const Outputs&, const Where&) const;   properties of one run
//   std::vector<std::pair<C, double>> equivalents() const;   rows that must agree, and how closely
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "models/ops/args.hpp"
#include "tests/support/expect_close.hpp"
#include "tests/support/gradcheck.hpp"

namespace lenlab::test {

// |x − ref| ≤ abs + |ref|·rel, elementwise, for a float backend against CpuBackend<double>.
struct Tolerance {
  double abs = 1e-5, rel = 1e-5;
};

// A differentiable input, the output holding its gradient, and the host tensor that gradient
// buffer held before the backward ("": the op writes the gradient instead of adding into it).
struct GradOf {
  std::string input, output, prefill;
};
// The finite-difference loss is L = Σ over these of output ⊙ upstream (a host tensor: the dout the
// case feeds its backward, or ones for a loss).
struct LossTerm {
  std::string output, upstream;
};

// A case's inputs in double, rounded to floats (finish()), so a float backend reads exactly the
// numbers the reference reads and differences are the computation's alone.
struct Host {
  std::map<std::string, std::vector<double>> real;
  std::map<std::string, std::vector<int>> ints;
  std::vector<GradOf> grads;
  std::vector<LossTerm> loss;

  const std::vector<double>& r(const std::string& name) const {
    const auto it = real.find(name);
    REQUIRE_MESSAGE(it != real.end(), "no host tensor " << name);
    return it->second;
  }
  const std::vector<int>& i(const std::string& name) const {
    const auto it = ints.find(name);
    REQUIRE_MESSAGE(it != ints.end(), "no host index tensor " << name);
    return it->second;
  }
  // Rounds every tensor but `exact` ones: tables whose rounding is part of a float backend's error
  // (RoPE's cos and sin, which RopeTable<float> rounds from the same doubles).
  Host& finish(const std::vector<std::string>& exact = {}) {
    for (auto& [name, v] : real)
      if (std::find(exact.begin(), exact.end(), name) == exact.end())
        for (double& x : v) x = static_cast<double>(static_cast<float>(x));
    return *this;
  }
};

// What a run returns, downloaded as double, in a fixed order.
struct Outputs {
  std::vector<std::pair<std::string, std::vector<double>>> list;

  const std::vector<double>& get(const std::string& name) const {
    for (const auto& [n, v] : list)
      if (n == name) return v;
    FAIL("no output " << name);
    return list.front().second;  // not reached: FAIL throws
  }
};

// Which backend produced the outputs a property check looks at.
struct Where {
  std::string backend;
  bool reference = false;  // CpuBackend<double>
  bool device = false;     // not host memory (results need not equal the CPU's to the bit)
};

// A backend's buffers, from host data in double.
template <class B>
struct On {
  using T = typename B::Scalar;
  template <class U>
  using Buf = typename B::template Buffer<U>;

  template <class U>
  static Buf<U> raw(const std::vector<U>& host) {
    Buf<U> b;
    B::upload(b, host.data(), host.size());
    return b;
  }
  // Host values converted to U (the backend's scalar by default), uploaded.
  template <class U = T>
  static Buf<U> put(const std::vector<double>& v) {
    std::vector<U> host(v.size());
    for (size_t i = 0; i < v.size(); ++i) host[i] = static_cast<U>(v[i]);
    return raw(host);
  }
  static Buf<int> ints(const std::vector<int>& v) { return raw(v); }
  // n NaNs: an output the op must write all of (an entry it skips shows up as NaN).
  template <class U = T>
  static Buf<U> unset(size_t n) {
    return put<U>(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()));
  }
  template <class U = T>
  static Buf<U> zeros(size_t n) {
    Buf<U> b;
    B::reserve(b, n);
    B::fill_zero(b.data(), n);
    return b;
  }
  // n values from element `from` on, as double.
  template <class U>
  static std::vector<double> get(const Buf<U>& b, size_t n, size_t from = 0) {
    std::vector<U> host(n);
    B::download(host.data(), b.data() + from, n);
    return std::vector<double>(host.begin(), host.end());
  }
};

template <class... A>
std::string cat(const A&... a) {
  std::ostringstream s;
  (s << ... << a);
  return s.str();
}

// A row's seed, from its name (FNV-1a): every row gets its own data, the same in every run.
inline uint64_t seed_of(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

inline std::vector<double> randn(size_t n, Rng& rng, double scale = 1.0) {
  std::vector<double> v(n);
  for (double& x : v) x = scale * rng.normal();
  return v;
}

// K models' packed batches (models/ops/args.hpp's Seqs): model k's sequences back to back from
// row 0, then padding rows up to N; a model with fewer sequences has empty slots at the end.
struct Packing {
  std::vector<std::vector<int>> lengths{};  // [K][its sequences]
  bool shifted = false;  // positions from a random start in steps of 0 to 2, not 0, 1, 2, …
  int extra_rows = 2;    // padding rows after the fullest model's tokens

  std::string name() const {
    std::string s = "lengths [";
    for (size_t k = 0; k < lengths.size(); ++k) {
      if (k) s += " |";
      for (int L : lengths[k]) s += cat(" ", L);
    }
    return s + " ]" + (shifted ? " shifted positions" : "");
  }
};

struct Packed {
  int K = 0, S = 0, N = 0;
  std::vector<int> offsets;                          // [K, S + 1]
  std::vector<int> positions;                        // [K, N]; 0 in padding rows
  int max_len = 0, max_position = 0, max_delta = 0;  // max_delta: the largest pos_i − pos_j

  int used(int k) const { return offsets[static_cast<size_t>(k) * (S + 1) + S]; }
  const int* model_offsets(int k) const {
    return offsets.data() + static_cast<size_t>(k) * (S + 1);
  }
};

// Deterministic: the same Packing always gives the same positions, so every case and every
// equivalent row built from it agree on them.
inline Packed pack(const Packing& p) {
  Rng rng(99);
  Packed out;
  out.K = static_cast<int>(p.lengths.size());
  for (const auto& l : p.lengths) out.S = std::max(out.S, static_cast<int>(l.size()));
  int most = 0;
  for (const auto& l : p.lengths) {
    int n = 0;
    for (int L : l) n += L;
    most = std::max(most, n);
  }
  out.N = most + p.extra_rows;
  out.offsets.assign(static_cast<size_t>(out.K) * (out.S + 1), 0);
  out.positions.assign(static_cast<size_t>(out.K) * out.N, 0);
  for (int k = 0; k < out.K; ++k) {
    int* off = out.offsets.data() + static_cast<size_t>(k) * (out.S + 1);
    const auto& l = p.lengths[k];
    for (int s = 0; s < out.S; ++s)
      off[s + 1] = off[s] + (s < static_cast<int>(l.size()) ? l[s] : 0);
    for (int s = 0; s < out.S; ++s) {
      int pos = p.shifted ? static_cast<int>(rng.uniform_int(0, 3)) : 0;
      const int first = pos;
      for (int r = off[s]; r < off[s + 1]; ++r) {
        out.positions[static_cast<size_t>(k) * out.N + r] = pos;
        out.max_position = std::max(out.max_position, pos);
        out.max_delta = std::max(out.max_delta, pos - first);
        pos += p.shifted ? static_cast<int>(rng.uniform_int(0, 2)) : 1;
      }
      out.max_len = std::max(out.max_len, off[s + 1] - off[s]);
    }
  }
  return out;
}

// A reference output against the same values computed from the op's definition in the test (so
// that a mistake the forward and the backward share, which finite differences cannot see, shows).
inline void expect_formula(const std::string& what, const std::vector<double>& got,
                           const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  expect_close(what + ", by the formula", got, expected, 1e-12, 1e-12);
}

// Rows r ≥ used(k) of v [K, N, width] must equal `expected` there exactly (0 when null): sequence
// operations write 0 in padding rows, and gradients reach them only as 0 (adding nothing).
inline void expect_padding(const std::string& what, const Packed& pk, const std::vector<double>& v,
                           int width, const std::vector<double>* expected = nullptr) {
  REQUIRE(v.size() == static_cast<size_t>(pk.K) * pk.N * width);
  for (int k = 0; k < pk.K; ++k) {
    size_t wrong = 0;
    for (size_t i = static_cast<size_t>(pk.used(k)) * width; i < static_cast<size_t>(pk.N) * width;
         ++i) {
      const size_t at = static_cast<size_t>(k) * pk.N * width + i;
      wrong += !(v[at] == (expected ? (*expected)[at] : 0.0));
    }
    CHECK_MESSAGE(wrong == 0, what << ": model " << k << " has " << wrong
                                   << " wrong entries in its padding rows");
  }
}

}  // namespace lenlab::test
