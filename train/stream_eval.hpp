#pragma once
// Streaming evaluation (`lenlab eval --stream`, LM-Infinite's claim, paper 001 §1 and §5): one long
// text read in a single pass through the key-value cache (models/model_decode.hpp), every position
// scored by the cross-entropy of the next token, reported per chunk of positions. The whole
// stream is one sequence, BOS at position 0: the row at position p predicts the token at p + 1,
// so a position's score uses everything before it that the attention admits (all of it without a
// window; the first n_global and last n_local tokens with a Λ-mask, whose cache then stays
// bounded, models/decode_cache.hpp). Each step appends at most `feed` tokens, never across a
// chunk's end, so a chunk's time is its own.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "models/attention_spec.hpp"
#include "models/model.hpp"

namespace lenlab {

struct StreamJob {
  const std::vector<int>* tokens = nullptr;  // BOS, then the text's tokens
  int64_t n_tokens = 0;                      // how many of them to read (≥ 2)
  int chunk = 4096;                          // positions per reported chunk
  int feed = 512;                            // tokens appended per decoding step
  AttentionSpec attention;                   // the test-time attention, as lenlab eval's
};

// One chunk of scored positions: the tokens at first_position..last_position (BOS is position 0,
// so the first chunk starts at 1), each predicted from the row before it.
struct StreamChunk {
  int64_t first_position = 0, last_position = 0;
  int64_t tokens = 0;      // positions scored (last − first + 1)
  double nll_sum = 0;      // their cross-entropy, summed (nats)
  double seconds = 0;      // wall time of the steps that read the chunk's rows
  size_t cache_bytes = 0;  // the key-value cache's size after the chunk
};

// Reads job.n_tokens tokens and calls on_chunk with each chunk in order, the last one possibly
// short. std::invalid_argument for fewer than two tokens, more than the list holds, more than
// an int's positions, or a chunk or feed < 1.
template <class B>
void stream_cross_entropy(Model<B>& model, const StreamJob& job,
                          const std::function<void(const StreamChunk&)>& on_chunk) {
  using Clock = std::chrono::steady_clock;
  const std::vector<int>& tokens = *job.tokens;
  const int64_t n = job.n_tokens;
  if (n < 2 || n > static_cast<int64_t>(tokens.size()) || n > INT32_MAX || job.chunk < 1 ||
      job.feed < 1)
    throw std::invalid_argument("stream_cross_entropy: bad token count, chunk or feed");
  const int V = model.config().vocab_size;
  DecodeCache<B> cache =
      model.begin_decode(DecodeSetup{1, static_cast<int>(n), -1, {&job.attention}, {}});
  StreamChunk chunk;
  auto started = Clock::now();
  // Rows at..at+take−1 are appended; row p predicts the token at p + 1. Chunk c's rows are
  // c·chunk .. (c+1)·chunk − 1 (its positions one more), and a step never crosses their end.
  for (int64_t at = 0; at < n - 1;) {
    const int64_t chunk_end = (at / job.chunk + 1) * job.chunk;  // the next chunk's first row
    const int take = static_cast<int>(std::min<int64_t>({job.feed, chunk_end - at, n - 1 - at}));
    const std::vector<int> part(tokens.begin() + at, tokens.begin() + at + take);
    const std::vector<typename B::Scalar> logits = model.decode(cache, {part}, true);
    for (int r = 0; r < take; ++r) {
      const auto* row = logits.data() + static_cast<size_t>(r) * V;
      const double largest = *std::max_element(row, row + V);
      double sum = 0;
      for (int v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - largest);
      const int next = tokens[at + r + 1];
      chunk.nll_sum += largest + std::log(sum) - static_cast<double>(row[next]);
    }
    if (chunk.tokens == 0) chunk.first_position = at + 1;
    chunk.tokens += take;
    at += take;
    chunk.last_position = at;
    if (at == chunk_end || at == n - 1) {
      const auto now = Clock::now();
      chunk.seconds = std::chrono::duration<double>(now - started).count();
      chunk.cache_bytes = cache.bytes();
      on_chunk(chunk);
      chunk = StreamChunk{};
      started = Clock::now();
    }
  }
}

}  // namespace lenlab
