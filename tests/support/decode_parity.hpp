#pragma once
// Incremental decoding (Model::decode, models/model_decode.hpp) against the full inference
// forward on any backend: the table of attention settings every encoding is checked under, and
// the check itself (the logits of every position, decoded one token at a time and in chunks, equal
// the full forward's). tests/models/test_decode.cpp runs it on the CPU, tests/cuda on the GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/attention_spec.hpp"
#include "models/model.hpp"
#include "models/packed_batch.hpp"
#include "tasks/batch.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab::test {

struct DecodeSetting {
  std::string name;
  AttentionSpec attention;
};

// Every test-time setting evaluation supports, each alone: plain, a temperature by length (its
// multiplier differs per sequence), the Λ-mask, a distance cap, a RoPE extension with YaRN's
// logit scale (for RoPE; a no-op elsewhere) and the dynamic one, which reads the batch's length.
inline std::vector<DecodeSetting> decode_settings() {
  std::vector<DecodeSetting> out;
  out.push_back({"plain", {}});
  AttentionSpec t;
  t.logit_scale = 0.8;
  t.logit_scale_by_length = {1.0, 1.0, 1.0, 1.0, 1.1, 1.2, 1.3, 1.4};
  out.push_back({"temperature by length", t});
  AttentionSpec lambda;
  lambda.window.n_global = 1;
  lambda.window.n_local = 3;
  out.push_back({"lambda-mask", lambda});
  AttentionSpec cap;
  cap.window.max_distance = 2;
  out.push_back({"distance cap", cap});
  AttentionSpec yarn;
  yarn.rope = {RopeScalingKind::kYarn, 2.0, 4};
  out.push_back({"yarn", yarn});
  AttentionSpec dynamic;
  dynamic.rope = {RopeScalingKind::kDynamicNtk, 1.0, 4};
  dynamic.rope_auto = true;
  out.push_back({"dynamic ntk", dynamic});
  return out;
}

// small_config with a token head over `vocab` tokens: the decoding tests' model.
inline ModelConfig decode_config(PositionalEncoding pe, int vocab = 6) {
  ModelConfig c = small_config(pe);
  c.token_head = true;
  c.vocab_size = vocab;
  return c;
}

// The sequences as one batch whose token head reads every row (the labels unused: 0).
inline Batch reading_every_row(const std::vector<std::vector<int>>& seqs) {
  Batch b;
  for (const auto& s : seqs) append_tokens(b, s);
  for (int r = 0; r < b.n_tokens(); ++r) {
    b.token.rows.push_back(r);
    b.token.labels.push_back(0);
    b.token.weights.push_back(1.0);
  }
  return b;
}

// Two sequences of 9 and 6 random tokens with the token head reading every row, decoded three
// ways: one token at a time (the last row's logits), a 4-token prefill then 2 at a time (every
// row's), and both sequences whole in one step. Each must equal the full forward's logits at the
// same rows to within rel of their largest magnitude.
template <class B>
void check_decode_parity(Model<B>& model, const AttentionSpec& attention, double rel) {
  using T = typename B::Scalar;
  const ModelConfig& c = model.config();
  const int V = c.vocab_size;
  Rng rng(17);
  std::vector<std::vector<int>> seqs(2);
  for (int len : {9, 6})
    for (int i = 0; i < len; ++i)
      seqs[len == 9 ? 0 : 1].push_back(static_cast<int>(rng.uniform_int(0, V - 1)));
  const Batch full = reading_every_row(seqs);
  PackedBatch<B> in;
  in.pack({&full}, c, {&attention});
  model.infer(in);
  const std::vector<T> want = model.download_token_logits(in);  // [rows, V]
  const std::vector<int> lengths = {9, 6};
  auto compare = [&](const std::vector<T>& got_rows, const std::vector<int>& rows) {
    std::vector<double> got, expect;
    for (size_t i = 0; i < rows.size(); ++i)
      for (int v = 0; v < V; ++v) {
        got.push_back(got_rows[i * V + v]);
        expect.push_back(want[static_cast<size_t>(rows[i]) * V + v]);
      }
    check_close_to_largest(got, expect, rel);
  };
  {  // one token at a time
    DecodeCache<B> cache = model.begin_decode(2, 9, attention, lengths);
    for (int i = 0; i < 9; ++i) {
      std::vector<std::vector<int>> step(2);
      std::vector<int> rows;
      for (int s = 0; s < 2; ++s)
        if (i < static_cast<int>(seqs[s].size())) step[s] = {seqs[s][i]};
      const std::vector<T> logits = model.decode(cache, step);
      std::vector<T> got;
      for (int s = 0; s < 2; ++s)
        if (!step[s].empty()) {
          got.insert(got.end(), logits.begin() + s * V, logits.begin() + (s + 1) * V);
          rows.push_back(full.offsets[s] + i);
        }
      INFO("one at a time, position " << i);
      compare(got, rows);
    }
  }
  {  // a prefill of 4, then 2 at a time, every row read
    DecodeCache<B> cache = model.begin_decode(2, 9, attention, lengths);
    for (int from = 0; from < 9; from = from == 0 ? 4 : from + 2) {
      const int to = from == 0 ? 4 : from + 2;
      std::vector<std::vector<int>> step(2);
      std::vector<int> rows;
      for (int s = 0; s < 2; ++s)
        for (int i = from; i < std::min<int>(to, seqs[s].size()); ++i) {
          step[s].push_back(seqs[s][i]);
          rows.push_back(full.offsets[s] + i);
        }
      INFO("chunks, from position " << from);
      compare(model.decode(cache, step, /*every_row=*/true), rows);
    }
  }
  {  // whole, and a token past the capacity refused
    DecodeCache<B> cache = model.begin_decode(2, 9, attention, lengths);
    std::vector<int> rows(full.n_tokens());
    for (int r = 0; r < full.n_tokens(); ++r) rows[r] = r;
    compare(model.decode(cache, seqs, true), rows);
    CHECK_THROWS_AS(model.decode(cache, {{1}, {}}), UsageError);
  }
}

}  // namespace lenlab::test
