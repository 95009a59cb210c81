#pragma once
// `lenlab generate`'s engine, on any backend: a prompt read into the key-value cache in one step,
// then one token at a time, each chosen from the last row's logits (train/token_sampler.hpp) and
// appended to the cache (models/model_decode.hpp), so a token costs one query per layer.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/rng.hpp"
#include "models/attention_spec.hpp"
#include "models/model.hpp"
#include "train/token_sampler.hpp"

namespace lenlab {

struct GenerateJob {
  std::vector<int> prompt;  // token ids, BOS first; at least one
  int tokens = 0;           // tokens to write after it
  AttentionSpec attention;  // how the model attends (the test-time settings of lenlab eval)
  Sampling sampling;
  uint64_t seed = 0;  // the draws' (sampling only)
};

// Writes job.tokens tokens after the prompt at positions 0, 1, …, calling on_token with each as
// soon as it is chosen, and returns them. A temperature by length counts the whole sequence,
// prompt and written tokens.
template <class B>
std::vector<int> generate(Model<B>& model, const GenerateJob& job,
                          const std::function<void(int)>& on_token = {}) {
  const int V = model.config().vocab_size;
  const int capacity = static_cast<int>(job.prompt.size()) + job.tokens;
  DecodeCache<B> cache = model.begin_decode(1, capacity, job.attention);
  Rng rng(job.seed);
  std::vector<int> written;
  std::vector<typename B::Scalar> logits = model.decode(cache, {job.prompt});
  while (static_cast<int>(written.size()) < job.tokens) {
    const int token = sample_token(logits.data(), V, job.sampling, rng);
    written.push_back(token);
    if (on_token) on_token(token);
    if (static_cast<int>(written.size()) < job.tokens) logits = model.decode(cache, {{token}});
  }
  return written;
}

}  // namespace lenlab
