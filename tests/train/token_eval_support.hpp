#pragma once
// What the token evaluation's tests share: a token model and its batches
// (tests/train/test_token_eval.cpp, test_token_runs.cpp).
#include <doctest/doctest.h>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

namespace lenlab::test {

namespace fs = std::filesystem;

// A small model for `task` with the task's vocabulary and a token head.
inline ModelConfig token_model(TaskKind task, const TokenTaskSettings& settings,
                               int max_positions) {
  ModelConfig c;
  c.n_layer = 2;
  c.d_model = 16;
  c.n_head = 2;
  c.d_ff = 32;
  c.pe = PositionalEncoding::kLearned;
  c.max_positions = max_positions;
  c.vocab_size = token_vocab_size(task, settings);
  c.scalar_head = false;
  c.token_head = true;
  return c;
}

// The metrics of one cell computed directly: the training forward's logits on the whole set,
// log-softmax and argmax per answer row in double.
inline LengthResult brute_force(Transformer<float>& model, const Batch& set,
                                const MarkovChain* chain, int length) {
  PackedBatch<CpuBackend<float>> packed;
  packed.pack({&set}, model.config());
  model.forward(packed);
  const int V = model.config().vocab_size, R = set.token.size();
  const float* z = model.token_logits();
  const std::vector<int32_t> offsets = token_readout_offsets(set);
  const int S = set.n_seq(), A = offsets[1];  // markov: every sequence's rows
  LengthResult r;
  std::vector<double> ce_at(A, 0.0), chain_at(A, 0.0);
  double ce = 0, chain_ce = 0, right = 0, whole = 0;
  for (int s = 0; s < S; ++s) {
    bool all = true;
    for (int a = 0; a < offsets[s + 1] - offsets[s]; ++a) {  // stack, binary: rows up to END
      const int i = offsets[s] + a;
      double norm = 0;
      int best = 0;
      for (int v = 0; v < V; ++v) {
        norm += std::exp(static_cast<double>(z[i * V + v]));
        if (z[i * V + v] > z[i * V + best]) best = v;
      }
      const double nll = std::log(norm) - z[i * V + set.token.labels[i]];
      ce += nll;
      if (chain) {
        ce_at[a] += nll / S;
        // The chain's own loss on this token: uniform for the first `order`, else its transition
        // probability from the `order` labels before it (markov's labels are x_1..x_L).
        const int k = chain->order();
        const double chain_nll = a < k ? std::log(static_cast<double>(chain->n_symbols()))
                                       : -std::log(chain->probs(chain->context_index(
                                             &set.token.labels[i - k]))[set.token.labels[i]]);
        chain_at[a] += chain_nll / S;
        chain_ce += chain_nll;
      }
      right += best == set.token.labels[i];
      all = all && best == set.token.labels[i];
    }
    whole += all;
  }
  CHECK(R == offsets[S]);
  r.cross_entropy = ce / R;
  r.token_accuracy = right / R;
  r.exact_match = whole / S;
  if (chain) {
    const std::vector<double> h = chain->position_entropy(length);
    for (int a = 0; a < A; ++a) r.positions.push_back({a + 1, ce_at[a], h[a], 0.0, chain_at[a]});
    r.chain_cross_entropy = chain_ce / R;
    r.excess_ce = r.cross_entropy - r.chain_cross_entropy;
  }
  return r;
}

}  // namespace lenlab::test
