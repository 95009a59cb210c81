#pragma once
// How `lenlab generate` picks each token from the model's logits (train/generate.hpp): the argmax
// (greedy), or a draw from the softmax at a temperature, kept to the k likeliest tokens (top-k)
// and to the smallest set whose probability reaches p (nucleus, top-p), as language models'
// generate() does.
#include <cstdint>
#include <string>

#include "core/rng.hpp"

namespace lenlab {

struct Sampling {
  double temperature = 0;  // 0: greedy (the argmax, the first of equal maxima); > 0: sampled
  int top_k = 0;           // > 0: only the k likeliest tokens (ties at the k-th kept)
  double top_p = 1;        // in (0, 1]: only the likeliest tokens whose probability reaches p
  bool greedy() const { return temperature == 0; }
};

// UsageError naming the flag and the valid range: a temperature < 0 or not finite, top_k < 0,
// top_p outside (0, 1], or top-k / top-p with greedy decoding (they shape a draw).
void check_sampling(const Sampling& s);

// One token from logits [V].
template <class T>
int sample_token(const T* logits, int V, const Sampling& s, Rng& rng);

}  // namespace lenlab
