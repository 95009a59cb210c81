#pragma once
// Table rows for causal attention over packed sequences: the training forward and backward
// ("attention") and the inference forward ("attention_infer"), with every option of
// ops::AttentionArgs. Shapes: qkv [K, N, 3d], out [K, N, d] (infer: [K, Q, d]), the probabilities
// in ops::ProbLayout's blocks; no parameters (Models{K, 0}).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/cpu/attention.hpp"
#include "models/cpu/attention_infer.hpp"
#include "models/cpu/rope.hpp"
#include "tests/models/backend_cases_attention_formula.hpp"
#include "tests/models/backend_cases_base.hpp"

namespace lenlab::test {

// Sets cpu::detail::min_tiled_length for a scope (−1: leaves it), and puts it back.
struct TiledFrom {
  int kept = cpu::detail::min_tiled_length();
  explicit TiledFrom(int length) {
    if (length >= 0) cpu::detail::min_tiled_length() = length;
  }
  ~TiledFrom() { cpu::detail::min_tiled_length() = kept; }
  TiledFrom(const TiledFrom&) = delete;
  TiledFrom& operator=(const TiledFrom&) = delete;
};

struct AttentionCase {
  // Where RoPE is applied: nowhere, inside attention by relative distance
  // (AttentionArgs::rope_cos), or to q and k beforehand by rope_forward (with rope_backward after
  // the attention backward).
  enum class Rope { kNone, kInAttention, kBefore };

  Packing packing{};
  int d = 8, n_head = 2;
  bool alibi = false;  // Press et al.'s slopes (ops::alibi_slopes) as a bias table −m_h·δ
  // A learned bias (AttentionArgs::bias and dbias): a random table by head and distance, or by
  // head, query position and distance (FIRE's kind); its gradient checked by finite differences.
  enum class Bias { kNone, kByDistance, kByQueryPosition };
  Bias bias = Bias::kNone;
  bool seq_scale = false;  // a logit multiplier per sequence, in [0.5, 1.5)
  // With seq_scale: it multiplies the bias too (AttentionArgs::seq_scale_bias, paper 002's τ);
  // else q·k alone.
  bool scale_bias = false;
  int n_global = 0, n_local = 0, max_distance = 0;
  Rope rope = Rope::kNone;
  bool infer = false;
  // Training only: AttentionArgs::row_read with every third row (row % 3 == 1) not read, whose
  // outputs and probabilities must be 0, the others as without the mask.
  bool mask_rows = false;
  // AttentionArgs::row_detached at every fourth row (row % 4 == 0), with the output gradient 0 at
  // half of them (row % 8 == 0: the skipped query work). The function checked by finite
  // differences reads those rows' keys and values from a frozen copy, so their gradient is 0.
  bool detach = false;
  std::vector<std::vector<int>>
      query_rows{};  // infer: [K][Q] rows asked for (−1: padding); empty: every row
  // Training on the CPU: the length from which a (sequence, head) block is tiled
  // (cpu::detail::min_tiled_length) for this row; −1 the kernels' own (kMinTiledLength).
  // equivalents() runs every training row both ways.
  int cpu_tiled_from = -1;
  Tolerance tol{};
  bool fd = true;

  // This row with a scale per sequence that multiplies the bias too (paper 002's temperature).
  AttentionCase scaling_the_bias() const {
    AttentionCase c = *this;
    c.seq_scale = c.scale_bias = true;
    return c;
  }

  std::string op() const { return infer ? "attention_infer" : "attention"; }
  std::string name() const {
    static const char* const kRope[] = {"", " rope in attention", " rope before"};
    static const char* const kBias[] = {"", " bias table", " bias table by query position"};
    return cat(op(), " d=", d, " n_head=", n_head, alibi ? " alibi" : "",
               kBias[static_cast<int>(bias)], seq_scale ? " seq_scale" : "",
               scale_bias ? " scaling the bias" : "",
               n_local > 0 ? cat(" window ", n_global, ",", n_local) : std::string(),
               max_distance > 0 ? cat(" max_distance ", max_distance) : std::string(),
               kRope[static_cast<int>(rope)],
               infer ? (query_rows.empty() ? " every row" : " query rows") : "",
               mask_rows ? " rows not read" : "", detach ? " detached rows" : "",
               cpu_tiled_from == 0         ? " tiled"
               : cpu_tiled_from == INT_MAX ? " row by row"
               : cpu_tiled_from > 0        ? cat(" tiled from ", cpu_tiled_from)
                                           : std::string(),
               " ", packing.name());
  }
  static bool read(size_t row) { return row % 3 != 1; }
  static bool detached(size_t row) { return row % 4 == 0; }
  int Q(const Packed& pk) const {
    return query_rows.empty() ? pk.N : static_cast<int>(query_rows.front().size());
  }

  Host make() const {
    Rng rng(seed_of(name()));
    const Packed pk = pack(packing);
    const size_t KN = static_cast<size_t>(pk.K) * pk.N;
    Host h;
    h.ints["offsets"] = pk.offsets;
    h.ints["positions"] = pk.positions;
    for (size_t r = 0; r < KN; ++r) h.ints["row_read"].push_back(read(r) ? 1 : 0);
    for (size_t r = 0; r < KN; ++r) h.ints["row_detached"].push_back(detached(r) ? 1 : 0);
    for (const auto& r : query_rows)
      h.ints["query_rows"].insert(h.ints["query_rows"].end(), r.begin(), r.end());
    ops::RopeTable<double> table;  // by position (rope_forward) or by distance: δ ≤ a position
    table.ensure(pk.max_position + 1, d / n_head, 10000.0);
    h.real["cos"] = table.cos;
    h.real["sin"] = table.sin;
    h.real["slopes"] = ops::alibi_slopes(n_head);
    // Bias tables [n_head, rows, cols] over every distance and position of the packing.
    const int cols = pk.max_position + 1, rows = bias_rows(pk);
    auto& bias_table = h.real["bias"];
    if (alibi)
      for (double m : h.r("slopes"))
        for (int delta = 0; delta < cols; ++delta) bias_table.push_back(-m * delta);
    if (bias != Bias::kNone) bias_table = randn(static_cast<size_t>(n_head) * rows * cols, rng);
    h.real["dbias0"] = randn(bias_table.size(), rng);
    auto& scale = h.real["seq_scale"];
    for (int i = 0; i < pk.K * pk.S; ++i) scale.push_back(0.5 + rng.uniform());
    h.real["qkv"] = randn(KN * 3 * d, rng);
    h.real["dout"] = randn(KN * d, rng);
    if (detach)
      for (size_t r = 0; r < KN; r += 8) std::fill_n(h.real["dout"].begin() + r * d, d, 0.0);
    h.real["qkv_frozen"] = h.real["qkv"];
    h.real["dqkv0"] = randn(KN * 3 * d, rng);
    if (!infer) {
      h.grads = {{"qkv", "dqkv", "dqkv0"}};
      if (bias != Bias::kNone) h.grads.push_back({"bias", "dbias", "dbias0"});
      h.loss = {{"out", "dout"}};
    }
    // ALiBi's table exactly as the model computes it in each type (PositionBias::table_as).
    return h.finish({"cos", "sin", "bias"});
  }
  int bias_rows(const Packed& pk) const {
    return bias == Bias::kByQueryPosition ? pk.max_position + 1 : 1;
  }

  template <class B>
  Outputs run(const Host& h) const {
    using D = On<B>;
    using T = typename B::Scalar;
    const Packed pk = pack(packing);
    const int K = pk.K, S = pk.S, N = pk.N;
    const size_t n3 = static_cast<size_t>(K) * N * 3 * d, n1 = static_cast<size_t>(K) * N * d;
    auto off = D::ints(h.i("offsets")), pos = D::ints(h.i("positions"));
    auto row_read = D::ints(h.i("row_read"));
    auto scale = D::put(h.r("seq_scale"));
    // ALiBi's table in T as the model computes it: −(T(m_h)·T(δ)).
    std::vector<double> bias_host = h.r("bias");
    if (alibi)
      for (size_t i = 0; i < bias_host.size(); ++i) {
        const int delta = static_cast<int>(i % (pk.max_position + 1));
        bias_host[i] = static_cast<double>(
            -(static_cast<T>(h.r("slopes")[i / (pk.max_position + 1)]) * static_cast<T>(delta)));
      }
    auto bias_table = D::put(bias_host.empty() ? std::vector<double>{0.0} : bias_host);
    auto dbias = D::put(h.r("dbias0").empty() ? std::vector<double>{0.0} : h.r("dbias0"));
    auto cos = D::put(h.r("cos")), sin = D::put(h.r("sin"));
    // Detached rows' keys and values from the frozen copy (the same numbers, not perturbed).
    std::vector<double> qkv_host = h.r("qkv");
    for (size_t r = 0; detach && r < static_cast<size_t>(K) * N; ++r)
      if (detached(r))
        std::copy_n(h.r("qkv_frozen").begin() + r * 3 * d + d, 2 * d,
                    qkv_host.begin() + r * 3 * d + d);
    auto qkv = D::put(qkv_host), dout = D::put(h.r("dout")), dqkv = D::put(h.r("dqkv0"));
    auto row_detached = D::ints(h.i("row_detached"));
    // Each model's probability blocks, and a stride with room to spare.
    std::vector<int64_t> blocks;
    std::vector<size_t> used;  // [K] elements of each model's blocks
    size_t stride = 0;
    for (int k = 0; k < K; ++k) {
      const std::vector<int64_t> o = ops::attention_offsets(pk.model_offsets(k), S, n_head);
      blocks.insert(blocks.end(), o.begin(), o.end());
      used.push_back(static_cast<size_t>(o.back()));
      stride = std::max(stride, used.back() + 3);
    }
    auto prob_offsets = D::raw(blocks);
    const ops::ProbLayout prob{prob_offsets.data(), stride};
    const ops::Seqs q{off.data(), pos.data(), S, N};
    const ops::Models m{K, 0};
    ops::AttentionArgs<T> a;
    if (alibi || bias != Bias::kNone) {
      a.bias = bias_table.data();
      a.bias_rows = bias_rows(pk);
      a.bias_cols = pk.max_position + 1;
      a.bias_stride = 0;  // the K models share the table
    }
    if (bias != Bias::kNone) a.dbias = dbias.data();
    a.seq_scale = seq_scale ? scale.data() : nullptr;
    a.seq_scale_bias = scale_bias;
    a.window = {n_global, n_local, max_distance};
    if (mask_rows) a.row_read = row_read.data();
    if (detach) a.row_detached = row_detached.data();
    if (rope == Rope::kInAttention) {
      a.rope_cos = cos.data();
      a.rope_sin = sin.data();
    }
    auto rotated = D::unset(n3);
    const T* input = qkv.data();
    if (rope == Rope::kBefore) {
      B::rope_forward(rotated.data(), qkv.data(), cos.data(), sin.data(), d, n_head, q, m);
      input = rotated.data();
    }
    // An inference row compares its query rows with the training forward's row path, to the bit.
    const TiledFrom tiled_from(infer ? INT_MAX : cpu_tiled_from);
    auto out = D::unset(n1), att = D::unset(K * stride);
    B::attention_forward(out.data(), att.data(), input, d, n_head, a, prob, q, m);
    const std::vector<double> out_host = D::get(out, n1);

    if (infer) {
      const int nq = Q(pk);
      auto rows = D::ints(query_rows.empty() ? std::vector<int>{0} : h.i("query_rows"));
      auto inf = D::unset(static_cast<size_t>(K) * nq * d);
      auto stats = D::unset(static_cast<size_t>(K) * nq * n_head * 2);
      a.row_stats = stats.data();
      B::attention_infer(inf.data(), input, query_rows.empty() ? nullptr : rows.data(), nq, d,
                         n_head, a, q, m);
      // The training forward's rows at the same queries (0 for padding), gathered on the host.
      std::vector<double> fwd(static_cast<size_t>(K) * nq * d, 0.0);
      for (int k = 0; k < K; ++k)
        for (int i = 0; i < nq; ++i) {
          const int r = query_rows.empty() ? i : query_rows[k][i];
          if (r < 0) continue;
          std::copy_n(out_host.begin() + (static_cast<size_t>(k) * N + r) * d, d,
                      fwd.begin() + (static_cast<size_t>(k) * nq + i) * d);
        }
      return {{{"out", D::get(inf, static_cast<size_t>(K) * nq * d)},
               {"stats", D::get(stats, static_cast<size_t>(K) * nq * n_head * 2)},
               {"forward rows", fwd}}};
    }

    auto scratch = D::unset(K * stride);  // the CUDA backward's workspace; unused on the CPU
    if (rope == Rope::kBefore) {
      auto drot = D::zeros(n3);
      B::attention_backward(drot.data(), scratch.data(), dout.data(), input, att.data(), d, n_head,
                            a, prob, q, m);
      B::rope_backward(dqkv.data(), drot.data(), cos.data(), sin.data(), d, n_head, q, m);
    } else {
      B::attention_backward(dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), d,
                            n_head, a, prob, q, m);
    }
    std::vector<double> probs;  // the used part of each model's blocks, back to back
    for (int k = 0; k < K; ++k) {
      const std::vector<double> p = D::get(att, used[k], k * stride);
      probs.insert(probs.end(), p.begin(), p.end());
    }
    Outputs o{{{"out", out_host}, {"probabilities", probs}, {"dqkv", D::get(dqkv, n3)}}};
    if (bias != Bias::kNone) o.list.push_back({"dbias", D::get(dbias, h.r("dbias0").size())});
    return o;
  }

  // The reference's outputs, computed from the definition instead.
  void formula(const Host& h, const Packed& pk, std::vector<double>& out,
               std::vector<double>& probs) const {
    const AttentionFormula f{d,
                             n_head,
                             alibi,
                             bias != Bias::kNone ? bias_rows(pk) : 0,
                             pk.max_position + 1,
                             seq_scale,
                             scale_bias,
                             n_global,
                             n_local,
                             max_distance,
                             rope == Rope::kInAttention,
                             rope == Rope::kBefore};
    f.compute(h, pk, out, probs);
  }

  void check(const Host& h, const Outputs& o, const Where& w) const {
    const Packed pk = pack(packing);
    const std::string what = w.backend + " " + name();
    if (infer) {
      check_infer(h, o, w, pk, what);
      return;
    }
    if (w.reference) {
      std::vector<double> out, probs;
      formula(h, pk, out, probs);
      if (mask_rows) zero_unread(pk, out, probs);
      expect_close(what + " out, by the formula", o.get("out"), out, 1e-12, 1e-12);
      expect_close(what + " probabilities, by the formula", o.get("probabilities"), probs, 1e-12,
                   1e-12);
    }
    expect_padding(what + " out", pk, o.get("out"), d);
    expect_padding(what + " dqkv", pk, o.get("dqkv"), 3 * d, &h.r("dqkv0"));
    // Every query row's probabilities: 0 for later keys and keys the window hides, ≥ 0, sum 1.
    const ops::AttentionWindow window{n_global, n_local, 0};
    const std::vector<double>& p = o.get("probabilities");
    size_t at = 0, masked_nonzero = 0, bad_sums = 0;
    double worst_sum = 0;
    for (int k = 0; k < pk.K; ++k)
      for (int s = 0; s < pk.S; ++s) {
        const int L = pk.model_offsets(k)[s + 1] - pk.model_offsets(k)[s];
        const size_t row0 = static_cast<size_t>(k) * pk.N + pk.model_offsets(k)[s];
        for (int head = 0; head < n_head; ++head)
          for (int i = 0; i < L; ++i) {
            const double want = mask_rows && !read(row0 + i) ? 0.0 : 1.0;  // the row's sum
            double sum = 0;
            for (int j = 0; j < L; ++j, ++at) {
              if (!window.admits(i, j)) masked_nonzero += p[at] != 0.0;
              if (!(p[at] >= 0.0)) ++bad_sums;  // negative or NaN
              sum += p[at];
            }
            worst_sum = std::max(worst_sum, std::abs(sum - want));
          }
      }
    REQUIRE(at == p.size());
    CHECK_MESSAGE(masked_nonzero == 0,
                  what << ": " << masked_nonzero << " masked probabilities ≠ 0");
    CHECK_MESSAGE(bad_sums == 0, what << ": " << bad_sums << " probabilities < 0 or NaN");
    CHECK_MESSAGE(worst_sum <= (w.reference ? 1e-12 : 1e-5),
                  what << ": a row of probabilities sums to 1 ± " << worst_sum);
  }

  // The formula's outputs and probabilities with the rows nothing reads set to 0.
  void zero_unread(const Packed& pk, std::vector<double>& out, std::vector<double>& probs) const {
    for (size_t r = 0; r < out.size() / d; ++r)
      if (!read(r)) std::fill_n(out.begin() + r * d, d, 0.0);
    size_t at = 0;
    for (int k = 0; k < pk.K; ++k)
      for (int s = 0; s < pk.S; ++s) {
        const int L = pk.model_offsets(k)[s + 1] - pk.model_offsets(k)[s];
        const size_t row0 = static_cast<size_t>(k) * pk.N + pk.model_offsets(k)[s];
        for (int head = 0; head < n_head; ++head)
          for (int i = 0; i < L; ++i, at += L)
            if (!read(row0 + i)) std::fill_n(probs.begin() + at, L, 0.0);
      }
  }

  // The inference forward's checks, and each query's (entropy, largest probability) per head from
  // the formula's probabilities (tests/models/backend_cases_attention_infer.hpp).
  void check_infer(const Host& h, const Outputs& o, const Where& w, const Packed& pk,
                   const std::string& what) const;
  std::vector<double> formula_stats(const Host& h, const Packed& pk,
                                    const std::vector<double>& probs) const;

  // Rows that must give the same outputs on the same inputs, and how close (0: to the bit, the
  // same arithmetic): a window no sequence reaches past, a cap no distance reaches, a scale over a
  // bias there is not, and RoPE by
  // distance without a cap against rope_forward's rotation (the same angles, other roundings).
  std::vector<std::pair<AttentionCase, double>> equivalents() const {
    const Packed pk = pack(packing);
    std::vector<std::pair<AttentionCase, double>> out;
    if (n_local > 0 && n_local >= pk.max_len) {
      AttentionCase e = *this;
      e.n_global = e.n_local = 0;
      out.emplace_back(e, 0.0);
    }
    if (max_distance > 0 && max_distance >= pk.max_delta) {
      AttentionCase e = *this;
      e.max_distance = 0;
      out.emplace_back(e, 0.0);
    }
    if (scale_bias && !alibi && bias == Bias::kNone) {  // no bias for the scale to cover
      AttentionCase e = *this;
      e.scale_bias = false;
      out.emplace_back(e, 0.0);
    }
    if (rope == Rope::kInAttention && max_distance == 0) {
      AttentionCase e = *this;
      e.rope = Rope::kBefore;
      out.emplace_back(e, 1e-12);
    }
    // The training forward and backward row by row and in tiles (the CPU's two paths; RoPE bent
    // inside attention has only the first): the same numbers, summed in another order.
    if (!infer && rope != Rope::kInAttention && cpu_tiled_from == -1) {
      AttentionCase e = *this;
      e.cpu_tiled_from = pk.max_len >= cpu::detail::kMinTiledLength ? INT_MAX : 0;
      out.emplace_back(e, 1e-12);
    }
    return out;
  }
};

}  // namespace lenlab::test

#include "tests/models/backend_cases_attention_infer.hpp"  // AttentionCase::check_infer
