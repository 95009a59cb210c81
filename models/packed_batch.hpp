#pragma once
// K host batches (tasks/batch.hpp), one per model, with how each model attends over its batch
// (models/attention_spec.hpp), in a backend's memory in the layout of models/ops/args.hpp: S
// sequence slots and N rows per model (the largest model's), shorter models padded; each head's
// read rows [K, R] padded with −1 and weight 0.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/attention_spec.hpp"
#include "models/config.hpp"
#include "models/ops/args.hpp"
#include "models/ops/prefix_noise.hpp"
#include "models/ops/tables.hpp"
#include "models/staged_upload.hpp"
#include "tasks/batch.hpp"

namespace lenlab {

template <class B>
struct PackedBatch {
  using T = typename B::Scalar;
  template <class U>
  using Buffer = typename B::template Buffer<U>;

  int n_models = 0;
  int rows = 0;          // N
  int n_seq = 0;         // S
  int max_position = 0;  // the largest position id
  int n_scalar = 0;      // R: rows the scalar head reads per model
  int n_token = 0;       // R': rows the token head reads per model
  int n_pairs = 0;       // P: pairs of token readout rows per model (the misalignment loss)
  size_t prob_stride = 0;
  AttentionSpec attention;  // windows and cap (shared by the K batches); scales are per sequence
  bool scaled = false;      // some sequence's logit scale is not 1

  // Every array below lives in one buffer of the backend's memory, uploaded by one copy
  // (models/staged_upload.hpp); an array the batch does not hold is null.
  DevicePart<int> tokens, positions;         // [K, N]
  DevicePart<int> offsets;                   // [K, S + 1]
  DevicePart<int64_t> prob_offsets;          // [K, S + 1]
  DevicePart<T> seq_scale;                   // [K, S] (only when scaled)
  DevicePart<int> scalar_rows;               // [K, R]
  DevicePart<double> scalar_weights;         // [K, R]
  DevicePart<int> token_rows, token_labels;  // [K, R']
  DevicePart<double> token_weights;          // [K, R']
  DevicePart<int> pair_first, pair_second;  // [K, P] indices into the model's R' token rows; −1 pad
  DevicePart<double> pair_weights;          // [K, P] the divergence's weights (0 for padding)
  DevicePart<double> pair_entropy_weights;  // [K, P] the entropies' weights (0 for padding)
  // The inference path computes its last layer at the read rows only: query_rows [K, R + R'] is
  // the scalar rows then the token rows, and each head reads its part of that.
  DevicePart<int> query_rows;                       // [K, R + R']
  DevicePart<int> scalar_in_query, token_in_query;  // [K, R], [K, R']
  DevicePart<int> query_mask;                       // [K, N] 1 at a query row, else 0
  // VCL's prefix kinds (train/vcl.hpp), when some batch has them: detached [K, N] (1: keys and
  // values pass no gradient); noise_codes [K, N] (ops::PrefixNoiseCode) with noise [K, N, d], the
  // standard-normal draws of the kNoiseRow rows (0 elsewhere), drawn from each batch's noise_seed.
  bool has_detached = false, has_noise = false;
  DevicePart<int> detached, noise_codes;
  DevicePart<T> noise;

  PackedBatch() = default;
  // The parts point into this batch's own buffer: no copies, moves keep it.
  PackedBatch(const PackedBatch&) = delete;
  PackedBatch& operator=(const PackedBatch&) = delete;
  PackedBatch(PackedBatch&&) = default;
  PackedBatch& operator=(PackedBatch&&) = default;

  ops::Seqs seqs() const { return {offsets.data(), positions.data(), n_seq, rows}; }
  ops::ProbLayout prob() const { return {prob_offsets.data(), prob_stride}; }
  int n_query() const { return n_scalar + n_token; }
  // Every size and switch of this batch that a training step's launches depend on (grids, loop
  // bounds, which operations run, how large a buffer is), with the attention window; what the
  // batch holds (tokens, positions, weights) lives in its buffers. Two batches with one key run
  // the same launches with the same arguments on a model whose tables have the same sizes
  // (Model::table_sizes): the key of a step replayed as a CUDA graph (models/cuda/step_graphs.hpp).
  std::vector<int64_t> shape_key() const {
    const ops::AttentionWindow& w = attention.window;
    return {n_models,
            rows,
            n_seq,
            max_position,
            n_scalar,
            n_token,
            n_pairs,
            static_cast<int64_t>(prob_stride),
            scaled,
            has_detached,
            has_noise,
            w.n_global,
            w.n_local,
            w.max_distance,
            attention.scale_covers_bias};
  }

  // Checks every batch against the model (token ids, positions within a learned table,
  // non-decreasing positions, readout rows) and uploads. `specs`: how each model attends (one per
  // batch; empty: plain causal attention for every one); their windows and RoPE extensions must
  // agree, their logit scales are per sequence. Throws UsageError for a sequence longer than a
  // learned position table, std::invalid_argument for malformed batches.
  void pack(const std::vector<const Batch*>& batches, const ModelConfig& c,
            const std::vector<const AttentionSpec*>& specs = {}) {
    static const AttentionSpec kPlain;
    if (!specs.empty() && specs.size() != batches.size())
      throw std::invalid_argument("pack: one attention spec per batch, or none");
    const auto spec = [&](size_t k) -> const AttentionSpec& {
      return specs.empty() ? kPlain : *specs[k];
    };
    n_models = static_cast<int>(batches.size());
    rows = n_seq = max_position = n_scalar = n_token = n_pairs = 0;
    attention = batches.empty() ? AttentionSpec{} : spec(0);
    for (int k = 0; k < n_models; ++k) {
      const Batch& b = *batches[k];
      check(b, c);
      if (!spec(k).batches_with(attention))
        throw std::invalid_argument(
            "models packed together need the same attention windows, rope scaling and "
            "temperature scope");
      rows = std::max(rows, b.n_tokens());
      n_seq = std::max(n_seq, b.n_seq());
      for (int p : b.positions) max_position = std::max(max_position, p);
      n_scalar = std::max(n_scalar, b.n_read());
      n_token = std::max(n_token, b.token.size());
      n_pairs = std::max(n_pairs, b.token.pairs.size());
    }
    const size_t K = n_models, N = rows, S1 = n_seq + 1, R = n_scalar, R2 = n_token;
    std::vector<int> tok(K * N, 0), pos(K * N, 0), off(K * S1, 0);
    std::vector<int64_t> prob(K * S1, 0);
    std::vector<T> scale(K * n_seq, T(1));
    std::vector<int> srows(K * R, -1), trows(K * R2, -1), labels(K * R2, -1);
    std::vector<double> sw(K * R, 0.0), tw(K * R2, 0.0);
    std::vector<int> qrows(K * (R + R2), -1), sq(K * R, -1), tq(K * R2, -1), qmask(K * N, 0);
    const size_t P = n_pairs;
    std::vector<int> first(K * P, -1), second(K * P, -1);
    std::vector<double> pw(K * P, 0.0), pe(K * P, 0.0);
    prob_stride = 0;
    scaled = false;
    for (size_t k = 0; k < K; ++k) {
      const Batch& b = *batches[k];
      std::copy(b.tokens.begin(), b.tokens.end(), tok.begin() + k * N);
      std::copy(b.positions.begin(), b.positions.end(), pos.begin() + k * N);
      const int n = b.n_seq();
      const std::vector<int64_t> p =
          n > 0 ? ops::attention_offsets(b.offsets.data(), n, c.n_head) : std::vector<int64_t>{0};
      for (size_t s = 0; s < S1; ++s) {  // empty slots repeat the model's last offset
        const size_t src = std::min<size_t>(s, n);
        off[k * S1 + s] = n > 0 ? b.offsets[src] : 0;
        prob[k * S1 + s] = p[src];
      }
      prob_stride = std::max<size_t>(prob_stride, p.back());
      // YaRN's logit multiplier, from the batch's or the model's factor (one for all its
      // sequences, as its angles)
      const double rope_scale = rope_logit_scale(attention.rope_at(max_position, c.rope_scaling));
      for (int s = 0; s < n; ++s) {
        scale[k * n_seq + s] = static_cast<T>(spec(k).scale_for(b.seq_len(s)) * rope_scale);
        scaled = scaled || scale[k * n_seq + s] != T(1);
      }
      for (int r = 0; r < b.n_read(); ++r) {
        srows[k * R + r] = qrows[k * (R + R2) + r] = b.read_rows[r];
        sw[k * R + r] = b.weight(r);
        sq[k * R + r] = r;
      }
      for (int r = 0; r < b.token.size(); ++r) {
        trows[k * R2 + r] = qrows[k * (R + R2) + R + r] = b.token.rows[r];
        labels[k * R2 + r] = b.token.labels[r];
        tw[k * R2 + r] = b.token.weights[r];
        tq[k * R2 + r] = static_cast<int>(R) + r;
      }
      const ReadoutPairs& pairs = b.token.pairs;
      for (int p = 0; p < pairs.size(); ++p) {
        first[k * P + p] = pairs.first[p];
        second[k * P + p] = pairs.second[p];
        pw[k * P + p] = pairs.weights[p];
        pe[k * P + p] = pairs.entropy_weights[p];
      }
      for (size_t i = 0; i < R + R2; ++i)
        if (qrows[k * (R + R2) + i] >= 0) qmask[k * N + qrows[k * (R + R2) + i]] = 1;
    }
    StagedUpload<B> staged;
    staged.add(tokens, tok);
    staged.add(positions, pos);
    staged.add(offsets, off);
    staged.add(prob_offsets, prob);
    if (scaled)
      staged.add(seq_scale, scale);
    else
      staged.skip(seq_scale);
    staged.add(scalar_rows, srows);
    staged.add(scalar_weights, sw);
    staged.add(token_rows, trows);
    staged.add(token_labels, labels);
    staged.add(token_weights, tw);
    if (P > 0) {
      staged.add(pair_first, first);
      staged.add(pair_second, second);
      staged.add(pair_weights, pw);
      staged.add(pair_entropy_weights, pe);
    } else {
      for (DevicePart<int>* v : {&pair_first, &pair_second}) staged.skip(*v);
      for (DevicePart<double>* v : {&pair_weights, &pair_entropy_weights}) staged.skip(*v);
    }
    staged.add(query_rows, qrows);
    staged.add(scalar_in_query, sq);
    staged.add(token_in_query, tq);
    staged.add(query_mask, qmask);
    stage_prefix(staged, batches, c);
    staged.upload(storage_);
  }

 private:
  Buffer<std::byte> storage_;  // every part above, in the backend's memory

  void stage_prefix(StagedUpload<B>& staged, const std::vector<const Batch*>& batches,
                    const ModelConfig& c) {
    has_detached = has_noise = false;
    for (const Batch* b : batches) {
      has_detached = has_detached || !b->detached.empty();
      has_noise = has_noise || !b->prefix_noise.empty();
    }
    const size_t K = n_models, N = rows, d = c.d_model;
    if (has_detached) {
      std::vector<int> flags(K * N, 0);
      for (size_t k = 0; k < K; ++k)
        std::copy(batches[k]->detached.begin(), batches[k]->detached.end(), flags.begin() + k * N);
      staged.add(detached, flags);
    } else {
      staged.skip(detached);
    }
    if (has_noise) {
      std::vector<int> codes(K * N, ops::kPassRow);
      std::vector<T> draws(K * N * d, T(0));
      for (size_t k = 0; k < K; ++k) {
        const Batch& b = *batches[k];
        Rng rng(b.noise_seed);
        for (size_t r = 0; r < b.prefix_noise.size(); ++r) {
          codes[k * N + r] = b.prefix_noise[r];
          if (b.prefix_noise[r] == ops::kNoiseRow)
            for (size_t i = 0; i < d; ++i)
              draws[(k * N + r) * d + i] = static_cast<T>(rng.normal());
        }
      }
      staged.add(noise_codes, codes);
      staged.add(noise, draws);
    } else {
      staged.skip(noise_codes);
      staged.skip(noise);
    }
  }

  static void check(const Batch& b, const ModelConfig& c) {
    const int n = b.n_tokens();
    const bool offsets_ok =
        b.offsets.empty() ? n == 0 : b.offsets.front() == 0 && b.offsets.back() == n;
    if (static_cast<int>(b.positions.size()) != n || !offsets_ok)
      throw std::invalid_argument("malformed batch: positions or offsets do not match its tokens");
    for (int t : b.tokens)
      if (t < 0 || t >= c.vocab_size)
        throw std::invalid_argument(
            fmt::format("token id {} outside the vocabulary of {}", t, c.vocab_size));
    for (int s = 0; s < b.n_seq(); ++s)
      for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
        if (b.positions[t] < 0 || (t > b.offsets[s] && b.positions[t] < b.positions[t - 1]))
          throw std::invalid_argument("positions must be >= 0 and not decrease within a sequence");
    int max_pos = -1;
    for (int p : b.positions) max_pos = std::max(max_pos, p);
    if (positional_encoding_info(c.pe).learned_table() && max_pos >= c.max_positions)
      throw UsageError(fmt::format(
          "a sequence of {} tokens (length {} plus BOS and EOS) is longer than the learned "
          "position table ({} rows, trained for lengths up to {}); learned positions cannot be "
          "evaluated past their table: train with a larger --l-test, or use another --pe",
          max_pos + 1, max_pos - 1, c.max_positions, c.max_positions - 2));
    for (int r : b.read_rows)
      if (r < 0 || r >= n) throw std::invalid_argument("a read row lies outside the batch");
    for (int r : b.token.rows)
      if (r < 0 || r >= n) throw std::invalid_argument("a token read row lies outside the batch");
    if (b.targets.size() != b.read_rows.size() ||
        (!b.weights.empty() && b.weights.size() != b.read_rows.size()) ||
        b.token.labels.size() != b.token.rows.size() ||
        b.token.weights.size() != b.token.rows.size())
      throw std::invalid_argument("a readout's rows, targets and weights differ in length");
    const ReadoutPairs& pairs = b.token.pairs;
    if (pairs.second.size() != pairs.first.size() || pairs.weights.size() != pairs.first.size() ||
        pairs.entropy_weights.size() != pairs.first.size())
      throw std::invalid_argument("a readout's pairs and their weights differ in length");
    std::vector<char> paired(b.token.size(), 0);  // a row in two pairs would race on the GPU
    for (const auto* side : {&pairs.first, &pairs.second})
      for (int r : *side) {
        if (r < 0 || r >= b.token.size())
          throw std::invalid_argument("a pair names a token readout row the batch lacks");
        if (paired[r]++) throw std::invalid_argument("a token readout row is in two pairs");
      }
    for (const auto* rows : {&b.detached, &b.prefix_noise})
      if (!rows->empty() && static_cast<int>(rows->size()) != n)
        throw std::invalid_argument("a batch's prefix rows differ in length from its tokens");
    for (int code : b.prefix_noise)
      if (code != ops::kPassRow && code != ops::kNoiseRow && code != ops::kStatsRow)
        throw std::invalid_argument(fmt::format("prefix noise code {} is not 0, 1 or 2", code));
    if (b.n_read() > 0 && !c.scalar_head)
      throw std::invalid_argument("the batch reads the scalar head, which the model lacks");
    if (b.token.size() > 0 && !c.token_head)
      throw std::invalid_argument("the batch reads the token head, which the model lacks");
  }
};

}  // namespace lenlab
