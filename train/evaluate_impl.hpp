#pragma once
// evaluate()'s definition (train/evaluate.hpp), instantiated per backend: train/trainer.cpp (CPU),
// train/cuda/instantiate.cpp (CUDA builds).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "train/attention_stats.hpp"
#include "train/evaluate.hpp"
#include "train/greedy_decode.hpp"
#include "train/random_positions.hpp"
#include "train/untrained_bias.hpp"

namespace lenlab {

// One forward's attention statistics into each model's accumulator (null: not wanted). Layers
// below the last query every row; the last, the packed query rows (scalar rows, then token rows).
template <class B>
void add_attention_stats(const Model<B>& model, const PackedBatch<B>& packed,
                         const std::vector<Batch>& slices,
                         std::vector<std::optional<AttentionStatsAccumulator>>& stats) {
  const int L = model.config().n_layer, H = model.config().n_head;
  for (int l = 0; l < L; ++l) {
    const auto st = model.download_attention_stats(packed, l);
    const bool last = l == L - 1;
    const int Q = last ? packed.n_query() : packed.rows;
    for (size_t k = 0; k < slices.size(); ++k) {
      if (!stats[k]) continue;
      const Batch& b = slices[k];
      std::vector<int> rows(Q, -1);
      if (!last) {
        for (int r = 0; r < b.n_tokens(); ++r) rows[r] = r;
      } else {
        for (int r = 0; r < b.n_read(); ++r) rows[r] = b.read_rows[r];
        for (int r = 0; r < b.token.size(); ++r) rows[packed.n_scalar + r] = b.token.rows[r];
      }
      // A scalar set weighs its sequences (exact enumeration); a token set weighs them equally.
      std::vector<double> weights(b.n_seq(), 1.0);
      if (!b.weights.empty() && static_cast<int>(b.weights.size()) == b.n_seq())
        weights = b.weights;
      stats[k]->add(l, st.data() + k * static_cast<size_t>(Q) * H * 2, rows, b, weights);
    }
  }
}

// The training forward (which keeps the probabilities and the attention outputs) over the first
// n[k] sequences of each set full[k] (0 or null: none), in chunks of at most ~2^22 probabilities
// per layer; visit(packed, slices, begin) after each chunk's forward, `begin` the index of the
// slices' first sequence in their sets.
template <class B, class Visit>
void probe_forward(Model<B>& model, const std::vector<EvalJob>& jobs,
                   const std::vector<const Batch*>& full, const std::vector<int>& n,
                   const Visit& visit) {
  const int K = static_cast<int>(jobs.size());
  const ModelConfig& c = model.config();
  int n_max = 0, tokens_max = 1;
  for (int k = 0; k < K; ++k)
    if (full[k] && n[k] > 0) {
      n_max = std::max(n_max, n[k]);
      tokens_max = std::max(tokens_max, full[k]->max_seq_len());
    }
  if (n_max == 0) return;
  const size_t per_seq = static_cast<size_t>(c.n_head) * tokens_max * tokens_max * K;
  const int chunk = static_cast<int>(std::clamp<size_t>((size_t{1} << 22) / per_seq, 1, n_max));
  PackedBatch<B> packed;
  for (int begin = 0; begin < n_max; begin += chunk) {
    std::vector<Batch> slices(K);
    std::vector<const Batch*> ptrs(K);
    std::vector<const AttentionSpec*> specs(K);
    for (int k = 0; k < K; ++k) {
      if (full[k] && begin < n[k])
        slices[k] = slice_batch(*full[k], begin, std::min(begin + chunk, n[k]));
      ptrs[k] = &slices[k];
      specs[k] = &jobs[k].attention;
    }
    packed.pack(ptrs, c, specs);
    model.forward(packed);
    visit(packed, slices, begin);
  }
}

// A sequence's weight: an enumerated scalar set's probability, 1 otherwise.
inline double sequence_weight(const Batch& b, int s) {
  return static_cast<int>(b.weights.size()) == b.n_seq() ? b.weights[s] : 1.0;
}

// One probe forward's attention logits (train/attention_probe.hpp) into each accumulator (null:
// not wanted), from the sets' first kAttentionProbeSamples sequences.
template <class B>
void add_attention_logits(const Model<B>& model, const PackedBatch<B>& packed,
                          const std::vector<Batch>& slices, int begin,
                          std::vector<std::optional<AttentionLogitsAccumulator>>& logits) {
  const ModelConfig& c = model.config();
  for (int l = 0; l < c.n_layer; ++l) {
    const auto P = model.download_attention_probabilities(packed, l);
    for (size_t k = 0; k < slices.size(); ++k) {
      const Batch& b = slices[k];
      if (!logits[k] || b.n_seq() == 0) continue;
      const std::vector<int64_t> off =
          ops::attention_offsets(b.offsets.data(), b.n_seq(), c.n_head);
      for (int s = 0; s < b.n_seq() && begin + s < kAttentionProbeSamples; ++s)
        logits[k]->add(l, P.data() + k * packed.prob_stride + off[s], b.seq_len(s),
                       sequence_weight(b, s));
    }
  }
}

// One probe forward's attention outputs into each sample (null: not wanted), from the sets' first
// kRepresentationSamples sequences: every row below the last layer, the read rows in it.
template <class B>
void add_representation(const Model<B>& model, const PackedBatch<B>& packed,
                        const std::vector<Batch>& slices, int begin,
                        const std::vector<RepresentationSample*>& samples) {
  const ModelConfig& c = model.config();
  const size_t Nd = static_cast<size_t>(packed.rows) * c.d_model;
  std::vector<int> rows;
  for (int l = 0; l < c.n_layer; ++l) {
    const bool last = l == c.n_layer - 1;
    const auto A = model.download_attention_output(packed, l);
    for (size_t k = 0; k < slices.size(); ++k) {
      const Batch& b = slices[k];
      if (!samples[k] || b.n_seq() == 0) continue;
      std::vector<char> read(b.n_tokens(), !last);
      if (last) {
        for (const int r : b.read_rows) read[r] = 1;
        for (int r = 0; r < b.token.size(); ++r) read[b.token.rows[r]] = 1;
      }
      for (int s = 0; s < b.n_seq() && begin + s < kRepresentationSamples; ++s) {
        rows.clear();
        for (int r = b.offsets[s]; r < b.offsets[s + 1]; ++r)
          if (read[r]) rows.push_back(r);
        samples[k]->add(l, A.data() + k * Nd, rows, sequence_weight(b, s));
      }
    }
  }
}

// A job's evaluation set at length l (and depth), with its random positions.
inline Batch job_eval_set(const EvalJob& j, int l, double depth) {
  if (is_token_task(j.task) && !j.token_settings)
    throw std::invalid_argument("evaluate: a token task needs its settings");
  Batch b = is_token_task(j.task) ? token_eval_batch(j.task, *j.token_settings, j.chain, l,
                                                     j.eval_samples, j.eval_seed, depth)
                                  : eval_batch(j.task, l, j.eval_samples, j.eval_seed);
  if (j.random_positions > 0) {
    Rng rng = evaluation_positions_rng(j.eval_seed, j.random_positions, l);
    randomize_positions(b, j.random_positions, rng);
  }
  return b;
}

template <class B>
std::vector<std::vector<LengthResult>> evaluate(Model<B>& model, const std::vector<EvalJob>& jobs,
                                                const std::function<void(int, int)>& on_length,
                                                size_t max_rows) {
  const int K = model.n_models(), V = model.config().vocab_size;
  if (static_cast<int>(jobs.size()) != K)
    throw std::invalid_argument("evaluate: one job per model is needed");
  // A job's depths: passkey's list, or the one "depth" of every other task.
  const auto depths_of = [](const EvalJob& j) {
    return j.depths.empty() ? std::vector<double>{kNoDepth} : j.depths;
  };
  std::vector<std::pair<int, double>> cells;  // every job's (length, depth), ascending, each once
  for (const EvalJob& j : jobs)
    for (const int l : j.lengths)
      for (const double d : depths_of(j)) cells.emplace_back(l, d);
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  // Each Markov chain's exact entropies H_1..H_L, once, for the longest length it is tested at.
  std::map<const MarkovChain*, std::vector<double>> entropies;
  for (const EvalJob& j : jobs)
    if (task_needs_chain(j.task) && !j.lengths.empty()) {
      if (!j.chain) throw std::invalid_argument("evaluate: markov needs its chain");
      std::vector<double>& h = entropies[j.chain];
      if (static_cast<int>(h.size()) < j.lengths.back())
        h = j.chain->position_entropy(j.lengths.back());
    }
  std::vector<std::vector<LengthResult>> results(K);
  PackedBatch<B> packed;
  const ModelConfig& config = model.config();
  const bool want_stats =
      std::any_of(jobs.begin(), jobs.end(), [](const EvalJob& j) { return j.attention_stats; });
  model.keep_attention_stats(want_stats);
  // Each representation job's reference samples, one per depth, at its reference length.
  std::vector<std::map<double, RepresentationSample>> references(K);
  for (int k = 0; k < K; ++k) {
    const EvalJob& j = jobs[k];
    if (j.representation_projections <= 0 || j.lengths.empty()) continue;
    if (j.representation_reference < 1)
      throw std::invalid_argument("evaluate: the representation measurement needs its reference");
    for (const double depth : depths_of(j)) {
      const Batch set = job_eval_set(j, j.representation_reference, depth);
      std::vector<const Batch*> full(K, nullptr);
      std::vector<int> n(K, 0);
      std::vector<RepresentationSample*> samples(K, nullptr);
      full[k] = &set;
      n[k] = std::min(set.n_seq(), kRepresentationSamples);
      samples[k] = &references[k]
                        .emplace(depth, RepresentationSample(config.n_layer, config.d_model,
                                                             j.representation_projections))
                        .first->second;
      probe_forward(model, jobs, full, n,
                    [&](const PackedBatch<B>& p, const std::vector<Batch>& slices, int begin) {
                      add_representation(model, p, slices, begin, samples);
                    });
    }
  }
  for (const auto& [l, depth] : cells) {
    // Runs with the same task and evaluation settings share one evaluation set.
    std::map<std::tuple<TaskKind, int, uint64_t, TokenTaskSettings, int>, Batch> sets;
    std::vector<const Batch*> full(K, nullptr);
    std::vector<std::optional<LengthScorer>> scorers(K);
    std::vector<std::optional<TokenScorer>> token_scorers(K);
    std::vector<std::optional<AttentionStatsAccumulator>> stats(K);
    int n_max = 0, participating = 0, tokens_max = 1;
    for (int k = 0; k < K; ++k) {
      const EvalJob& j = jobs[k];
      const std::vector<double> depths = depths_of(j);
      if (!std::binary_search(j.lengths.begin(), j.lengths.end(), l) ||
          std::find(depths.begin(), depths.end(), depth) == depths.end())
        continue;
      const bool token = is_token_task(j.task);
      const TokenTaskSettings* ts = j.token_settings;
      if (token && !ts) throw std::invalid_argument("evaluate: a token task needs its settings");
      // (The depth is the cell's: one per cell.)
      const auto key = std::make_tuple(j.task, j.eval_samples, j.eval_seed,
                                       token ? *ts : TokenTaskSettings{}, j.random_positions);
      auto it = sets.find(key);
      if (it == sets.end()) it = sets.emplace(key, job_eval_set(j, l, depth)).first;
      full[k] = &it->second;
      if (j.attention_stats) stats[k].emplace(config.n_layer, config.n_head);
      if (token)
        token_scorers[k].emplace(it->second, task_needs_chain(j.task) ? j.chain : nullptr,
                                 task_needs_chain(j.task) ? entropies.at(j.chain).data() : nullptr,
                                 l, depth, task_reads_corpus(j.task));
      else
        scorers[k].emplace(it->second, *j.reparam, l);
      n_max = std::max(n_max, it->second.n_seq());
      tokens_max = std::max(tokens_max, it->second.max_seq_len());
      ++participating;
    }
    // Sequences per forward: at most max_rows rows over all models (memory stays bounded).
    const int chunk = static_cast<int>(
        std::clamp<size_t>(max_rows / (static_cast<size_t>(participating) * tokens_max), 1, n_max));
    for (int begin = 0; begin < n_max; begin += chunk) {
      std::vector<Batch> slices(K);
      std::vector<const Batch*> ptrs(K);
      std::vector<const AttentionSpec*> specs(K);
      for (int k = 0; k < K; ++k) {
        if (full[k] && begin < full[k]->n_seq())
          slices[k] = slice_batch(*full[k], begin, std::min(begin + chunk, full[k]->n_seq()));
        ptrs[k] = &slices[k];
        specs[k] = &jobs[k].attention;
      }
      packed.pack(ptrs, model.config(), specs);
      model.infer(packed);
      if (want_stats) add_attention_stats(model, packed, slices, stats);
      if (packed.n_scalar > 0) {
        const auto z = model.download_scalar_out(packed);
        const size_t R = packed.n_scalar;
        for (int k = 0; k < K; ++k)
          for (int s = 0; s < slices[k].n_read(); ++s) {
            scorers[k]->add(begin + s, static_cast<double>(z[k * R + s]));
            if (jobs[k].on_output) jobs[k].on_output(*full[k], begin + s, z[k * R + s]);
          }
      }
      if (packed.n_token > 0) {
        const auto logits = model.download_token_logits(packed);
        const size_t R = packed.n_token;
        for (int k = 0; k < K; ++k) {
          const Batch& slice = slices[k];
          if (!full[k] || slice.token.size() == 0) continue;
          // The slice's answer rows continue the full set's: sequence `begin` starts them.
          const std::vector<int32_t> offsets = token_readout_offsets(slice);
          const int first = token_scorers[k]->first_readout(begin);
          std::vector<double> p;
          std::vector<int> argmax;
          for (int s = 0; s < slice.n_seq(); ++s) {
            p.clear();
            argmax.clear();
            for (int r = offsets[s]; r < offsets[s + 1]; ++r) {
              const TokenOutput o =
                  score_logits(&logits[(k * R + r) * V], V, slice.token.labels[r]);
              token_scorers[k]->add(first + r, o.log_p_label, o.argmax == slice.token.labels[r]);
              p.push_back(std::exp(o.log_p_label));
              argmax.push_back(o.argmax);
            }
            if (jobs[k].on_token_output)
              jobs[k].on_token_output(*full[k], l, depth, begin + s, p, argmax);
          }
        }
      }
    }
    // What the model writes (EvalJob::greedy), from the key-value cache.
    const std::vector<std::vector<char>> greedy = greedy_correct(model, jobs, full, max_rows);
    // The probes through the training forward: attention logits, representation distances.
    std::vector<std::optional<AttentionLogitsAccumulator>> logits(K);
    std::vector<std::optional<RepresentationSample>> representation(K);
    std::vector<RepresentationSample*> representation_of(K, nullptr);
    std::vector<int> probed(K, 0);
    for (int k = 0; k < K; ++k) {
      if (!full[k]) continue;
      if (jobs[k].attention_logits) {
        logits[k].emplace(config.n_layer, config.n_head);
        probed[k] = kAttentionProbeSamples;
      }
      if (jobs[k].representation_projections > 0) {
        representation_of[k] = &representation[k].emplace(config.n_layer, config.d_model,
                                                          jobs[k].representation_projections);
        probed[k] = std::max(probed[k], kRepresentationSamples);
      }
      probed[k] = std::min(probed[k], full[k]->n_seq());
    }
    probe_forward(model, jobs, full, probed,
                  [&](const PackedBatch<B>& p, const std::vector<Batch>& slices, int begin) {
                    add_attention_logits(model, p, slices, begin, logits);
                    add_representation(model, p, slices, begin, representation_of);
                  });
    // A length is done for run k after its own last depth.
    for (int k = 0; k < K; ++k) {
      if (scorers[k]) results[k].push_back(scorers[k]->finish());
      if (token_scorers[k]) results[k].push_back(token_scorers[k]->finish());
      if (full[k] && jobs[k].greedy) add_generated_scores(results[k].back(), *full[k], greedy[k]);
      if (stats[k]) results[k].back().attention = stats[k]->finish();
      if (logits[k]) results[k].back().logits = logits[k]->finish();
      if (representation[k])
        results[k].back().representation = representation[k]->distance_to(references[k].at(depth));
      if (full[k] && !jobs[k].untrained_distances.empty())
        results[k].back().untrained_pairs = untrained_pair_fraction(
            *full[k], jobs[k].attention.window, jobs[k].untrained_distances);
      if (full[k] && jobs[k].on_result) jobs[k].on_result(results[k].back());
      const std::vector<double> depths = depths_of(jobs[k]);
      if (full[k] && on_length && depth == *std::max_element(depths.begin(), depths.end()))
        on_length(k, l);
    }
  }
  return results;
}

}  // namespace lenlab
