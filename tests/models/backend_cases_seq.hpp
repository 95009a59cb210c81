#pragma once
// Table rows for the operations over packed sequences (embedding, RoPE) and the row gather. Inputs
// hold random values in padding rows too, and upstream gradients are nonzero there: the forward
// must ignore them and write 0, and the backward must add nothing from them.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/cpu/rope.hpp"
#include "models/ops/prefix_noise.hpp"
#include "tests/models/backend_cases_base.hpp"

namespace lenlab::test {

// out [K, N, d] = wte[token] + wpe[position]; wte then wpe in each model's P-element block, or a
// fixed table shared by the models (stride 0, no gradient).
struct EmbeddingCase {
  Packing packing{};
  int d = 5, vocab = 5;
  bool learned = true;  // a learned position table (wpe); without, wpe is null
  bool fixed = false;   // a fixed table "table" [positions, d] shared by every model (not learned)
  int gap = 1;          // P = (vocab + positions)·d + gap
  double token_scale = 1;  // the token embedding's multiplier (ModelConfig::embedding_scale)
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "embedding"; }
  int n_positions() const { return pack(packing).max_position + 2; }  // a row to spare
  size_t P() const { return static_cast<size_t>(vocab + (learned ? n_positions() : 0)) * d + gap; }
  std::string name() const {
    return cat("embedding d=", d, " vocab=", vocab,
               learned ? " learned positions" : (fixed ? " fixed table" : " no table"), " P=", P(),
               token_scale != 1 ? cat(" token scale ", token_scale) : std::string(), " ",
               packing.name());
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const Packed pk = pack(packing);
    const size_t KN = static_cast<size_t>(pk.K) * pk.N;
    Host h;
    h.ints["offsets"] = pk.offsets;
    h.ints["positions"] = pk.positions;
    auto& tokens = h.ints["tokens"];
    for (size_t t = 0; t < KN; ++t)
      tokens.push_back(static_cast<int>(rng.uniform_int(0, vocab - 1)));
    h.real["w"] = randn(pk.K * P(), rng);
    h.real["dout"] = randn(KN * d, rng);
    h.real["dw0"] = randn(pk.K * P(), rng);
    if (fixed) h.real["table"] = randn(static_cast<size_t>(n_positions()) * d, rng);
    h.grads = {{"w", "dw", "dw0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const Packed pk = pack(packing);
    const size_t KN = static_cast<size_t>(pk.K) * pk.N;
    auto off = D::ints(h.i("offsets")), pos = D::ints(h.i("positions"));
    auto tokens = D::ints(h.i("tokens"));
    auto w = D::put(h.r("w")), dout = D::put(h.r("dout")), dw = D::put(h.r("dw0"));
    auto out = D::unset(KN * d);
    auto table = D::put(fixed ? h.r("table") : std::vector<double>{});
    const ops::Seqs q{off.data(), pos.data(), pk.S, pk.N};
    const ops::Models m{pk.K, P()};
    const size_t wpe = static_cast<size_t>(vocab) * d;  // within a model's block
    const auto* positions = learned ? w.data() + wpe : (fixed ? table.data() : nullptr);
    using T = typename D::T;
    B::embedding_forward(out.data(), tokens.data(), w.data(), static_cast<T>(token_scale),
                         positions, learned ? P() : 0, d, q, m);
    B::embedding_backward(dw.data(), static_cast<T>(token_scale),
                          learned ? dw.data() + wpe : nullptr, dout.data(), tokens.data(), vocab,
                          n_positions(), d, q, m);
    return {{{"out", D::get(out, KN * d)}, {"dw", D::get(dw, pk.K * P())}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const Packed pk = pack(packing);
    expect_padding(w.backend + " " + name() + " out", pk, o.get("out"), d);
    if (!w.reference) return;
    std::vector<double> out(static_cast<size_t>(pk.K) * pk.N * d, 0.0);
    for (int k = 0; k < pk.K; ++k)
      for (int r = 0; r < pk.used(k); ++r) {
        const size_t t = static_cast<size_t>(k) * pk.N + r;
        const double* block = h.r("w").data() + k * P();
        for (int c = 0; c < d; ++c)
          out[t * d + c] = token_scale * block[h.i("tokens")[t] * d + c] +
                           (learned ? block[(vocab + pk.positions[t]) * d + c] : 0.0) +
                           (fixed ? h.r("table")[pk.positions[t] * d + c] : 0.0);
      }
    expect_formula(name() + " out", o.get("out"), out);
  }
};

// VCL's random prefix (models/ops/prefix_noise.hpp): out [K, N, d] from x and noise [K, N, d] and
// row codes [K, N]. In a sequence of L rows: row 0 passes, rows 1 .. L/2 − 1 are noise and the
// rest give the statistics; a 2-row sequence is noise only. A sequence's noise follows the other
// sequences' statistics: a model with one sequence that has stats rows (packing `three`'s third)
// passes whole.
struct PrefixNoiseCase {
  Packing packing{};
  int d = 5;
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "prefix_noise"; }
  std::string name() const { return cat("prefix_noise d=", d, " ", packing.name()); }
  static std::vector<int> codes(const Packed& pk) {
    std::vector<int> c(static_cast<size_t>(pk.K) * pk.N, ops::kPassRow);
    for (int k = 0; k < pk.K; ++k)
      for (int s = 0; s < pk.S; ++s) {
        const int first = pk.model_offsets(k)[s], L = pk.model_offsets(k)[s + 1] - first;
        for (int i = 0; i < L; ++i)
          c[static_cast<size_t>(k) * pk.N + first + i] =
              L == 2 ? ops::kNoiseRow
                     : (i == 0 ? ops::kPassRow : (i < L / 2 ? ops::kNoiseRow : ops::kStatsRow));
      }
    return c;
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const Packed pk = pack(packing);
    const size_t KN = static_cast<size_t>(pk.K) * pk.N;
    Host h;
    h.ints["offsets"] = pk.offsets;
    h.ints["positions"] = pk.positions;
    h.ints["codes"] = codes(pk);
    h.real["x"] = randn(KN * d, rng);
    h.real["noise"] = randn(KN * d, rng);
    h.real["dout"] = randn(KN * d, rng);
    h.real["dx0"] = randn(KN * d, rng);
    h.grads = {{"x", "dx", "dx0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const Packed pk = pack(packing);
    const size_t KN = static_cast<size_t>(pk.K) * pk.N;
    auto off = D::ints(h.i("offsets")), pos = D::ints(h.i("positions"));
    auto codes = D::ints(h.i("codes"));
    auto x = D::put(h.r("x")), noise = D::put(h.r("noise")), dout = D::put(h.r("dout"));
    auto dx = D::put(h.r("dx0"));
    auto out = D::unset(KN * d);
    const ops::Seqs q{off.data(), pos.data(), pk.S, pk.N};
    const ops::Models m{pk.K, 0};
    B::prefix_noise_forward(out.data(), x.data(), noise.data(), codes.data(), d, q, m);
    B::prefix_noise_backward(dx.data(), dout.data(), x.data(), noise.data(), codes.data(), d, q, m);
    return {{{"out", D::get(out, KN * d)}, {"dx", D::get(dx, KN * d)}}};
  }
  // The reference against the definition: per (sequence, feature), μ and σ of the model's other
  // sequences' stats rows, in two passes.
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const Packed pk = pack(packing);
    expect_padding(w.backend + " " + name() + " out", pk, o.get("out"), d);
    expect_padding(w.backend + " " + name() + " dx", pk, o.get("dx"), d, &h.r("dx0"));
    if (!w.reference) return;
    const std::vector<int>& c = h.i("codes");
    const std::vector<double>&x = h.r("x"), &noise = h.r("noise");
    std::vector<double> out(x.size(), 0.0);
    size_t replaced = 0;
    for (int k = 0; k < pk.K; ++k)
      for (int s = 0; s < pk.S; ++s) {
        const size_t r0 = static_cast<size_t>(k) * pk.N + pk.model_offsets(k)[s];
        const size_t r1 = static_cast<size_t>(k) * pk.N + pk.model_offsets(k)[s + 1];
        for (int f = 0; f < d; ++f) {
          std::vector<double> stats;  // the other sequences' stats rows
          for (size_t r = static_cast<size_t>(k) * pk.N;
               r < static_cast<size_t>(k) * pk.N + pk.used(k); ++r)
            if ((r < r0 || r >= r1) && c[r] == ops::kStatsRow) stats.push_back(x[r * d + f]);
          double mean = 0, var = 0;
          for (double v : stats) mean += v / static_cast<double>(stats.size());
          for (double v : stats) var += (v - mean) * (v - mean) / static_cast<double>(stats.size());
          for (size_t r = r0; r < r1; ++r) {
            const bool noisy = !stats.empty() && c[r] == ops::kNoiseRow;
            replaced += noisy;
            out[r * d + f] = noisy ? mean + std::sqrt(var + ops::kPrefixNoiseEps) * noise[r * d + f]
                                   : x[r * d + f];
          }
        }
      }
    CHECK(replaced > 0);
    expect_close(name() + " out, by the formula", o.get("out"), out, 1e-12, 1e-12);
  }
};

// out [K, R, d] = rows `rows` [K, R] of x [K, N, d] (−1: a padding row, 0).
struct GatherRowsCase {
  int N = 6, d = 4;
  std::vector<std::vector<int>> rows{};  // [K][R]; with repeats, whose gradients add up
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "gather_rows"; }
  int K() const { return static_cast<int>(rows.size()); }
  int R() const { return static_cast<int>(rows.front().size()); }
  std::string name() const {
    std::string s = cat("gather_rows N=", N, " d=", d, " rows [");
    for (size_t k = 0; k < rows.size(); ++k) {
      if (k) s += " |";
      for (int r : rows[k]) s += cat(" ", r);
    }
    return s + " ]";
  }
  Host make() const {
    Rng rng(seed_of(name()));
    Host h;
    for (const auto& r : rows) h.ints["rows"].insert(h.ints["rows"].end(), r.begin(), r.end());
    h.real["x"] = randn(static_cast<size_t>(K()) * N * d, rng);
    h.real["dout"] = randn(static_cast<size_t>(K()) * R() * d, rng);
    h.real["dx0"] = randn(static_cast<size_t>(K()) * N * d, rng);
    h.grads = {{"x", "dx", "dx0"}};
    h.loss = {{"out", "dout"}};
    return h.finish();
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const size_t n_out = static_cast<size_t>(K()) * R() * d,
                 n_in = static_cast<size_t>(K()) * N * d;
    auto r = D::ints(h.i("rows"));
    auto x = D::put(h.r("x")), dout = D::put(h.r("dout")), dx = D::put(h.r("dx0"));
    auto out = D::unset(n_out);
    const ops::Models m{K(), 0};
    B::gather_rows_forward(out.data(), x.data(), r.data(), R(), N, d, m);
    B::gather_rows_backward(dx.data(), dout.data(), r.data(), R(), N, d, m);
    return {{{"out", D::get(out, n_out)}, {"dx", D::get(dx, n_in)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const std::vector<int>& r = h.i("rows");
    size_t wrong = 0;
    for (size_t i = 0; i < r.size(); ++i)
      for (int c = 0; c < d && r[i] < 0; ++c) wrong += o.get("out")[i * d + c] != 0.0;
    CHECK_MESSAGE(wrong == 0, w.backend << " " << name() << ": " << wrong
                                        << " nonzero entries in rows gathered from −1");
    if (!w.reference) return;
    std::vector<double> out(r.size() * d, 0.0);
    for (size_t i = 0; i < r.size(); ++i)
      for (int c = 0; c < d && r[i] >= 0; ++c)
        out[i * d + c] = h.r("x")[((i / R()) * N + r[i]) * d + c];
    expect_formula(name() + " out", o.get("out"), out);
  }
};

// out [K, N, 3d] = qkv with q and k rotated by each row's position (cos, sin tables), v copied.
struct RopeCase {
  Packing packing{};
  int d = 8, n_head = 2;
  double base = 10000.0;
  Tolerance tol{};
  bool fd = true;

  std::string op() const { return "rope"; }
  std::string name() const {
    return cat("rope d=", d, " n_head=", n_head, " base ", base, " ", packing.name());
  }
  Host make() const {
    Rng rng(seed_of(name()));
    const Packed pk = pack(packing);
    const size_t n = static_cast<size_t>(pk.K) * pk.N * 3 * d;
    ops::RopeTable<double> table;
    table.ensure(pk.max_position + 1, d / n_head, base);
    Host h;
    h.ints["offsets"] = pk.offsets;
    h.ints["positions"] = pk.positions;
    h.real["cos"] = table.cos;
    h.real["sin"] = table.sin;
    h.real["x"] = randn(n, rng);
    h.real["dout"] = randn(n, rng);
    h.real["dx0"] = randn(n, rng);
    h.grads = {{"x", "dx", "dx0"}};
    h.loss = {{"out", "dout"}};
    return h.finish({"cos", "sin"});
  }
  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    const Packed pk = pack(packing);
    const size_t n = static_cast<size_t>(pk.K) * pk.N * 3 * d;
    auto off = D::ints(h.i("offsets")), pos = D::ints(h.i("positions"));
    auto cos = D::put(h.r("cos")), sin = D::put(h.r("sin"));
    auto x = D::put(h.r("x")), dout = D::put(h.r("dout")), dx = D::put(h.r("dx0"));
    auto out = D::unset(n);
    const ops::Seqs q{off.data(), pos.data(), pk.S, pk.N};
    const ops::Models m{pk.K, 0};
    B::rope_forward(out.data(), x.data(), cos.data(), sin.data(), d, n_head, q, m);
    B::rope_backward(dx.data(), dout.data(), cos.data(), sin.data(), d, n_head, q, m);
    return {{{"out", D::get(out, n)}, {"dx", D::get(dx, n)}}};
  }
  void check(const Host& h, const Outputs& o, const Where& w) const {
    const Packed pk = pack(packing);
    expect_padding(w.backend + " " + name() + " out", pk, o.get("out"), 3 * d);
    expect_padding(w.backend + " " + name() + " dx", pk, o.get("dx"), 3 * d, &h.r("dx0"));
    if (!w.reference) return;
    // q and k of each head rotated by the row's position, angles computed afresh; v copied.
    const int hd = d / n_head;
    std::vector<double> out(o.get("out").size(), 0.0);
    for (int k = 0; k < pk.K; ++k)
      for (int r = 0; r < pk.used(k); ++r) {
        const size_t t = static_cast<size_t>(k) * pk.N + r;
        const double* x = h.r("x").data() + t * 3 * d;
        for (int part = 0; part < 2; ++part)
          for (int head = 0; head < n_head; ++head) {
            const int col = part * d + head * hd;
            for (int m = 0; m < hd / 2; ++m) {
              const double a = pk.positions[t] * std::pow(base, -2.0 * m / hd);
              out[t * 3 * d + col + 2 * m] =
                  x[col + 2 * m] * std::cos(a) - x[col + 2 * m + 1] * std::sin(a);
              out[t * 3 * d + col + 2 * m + 1] =
                  x[col + 2 * m] * std::sin(a) + x[col + 2 * m + 1] * std::cos(a);
            }
          }
        std::copy_n(x + 2 * d, d, out.begin() + t * 3 * d + 2 * d);
      }
    expect_formula(name() + " out", o.get("out"), out);
  }
};

}  // namespace lenlab::test
