// lenlab's own token tasks (tasks/token_tasks.hpp has their formats): passkey and recall
// (retrieval), copy and reverse (the whole input again), parity (one answer). Reverse and parity
// are also the Chomsky-hierarchy study's reverse_string and parity_check.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "tasks/token_task_math.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab::tasks {
namespace {

// [BOS] FILL×a MARK key(k) FILL×b [SEP] key(k),  L = a + 1 + k + b
void draw_passkey(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
  std::vector<int32_t>& t = seq.tokens;
  const int k = in.settings->key_length;
  const int free = length - k - 1;  // fill tokens in all
  const int a = in.depth_fill >= 0 ? in.depth_fill : static_cast<int>(rng.uniform_int(0, free));
  t.insert(t.end(), a, in.special.fill);
  t.push_back(in.special.mark);
  const size_t key_begin = t.size();
  for (int i = 0; i < k; ++i) t.push_back(in.symbol(rng));
  t.insert(t.end(), free - a, in.special.fill);
  seq.first = static_cast<int>(t.size());
  t.push_back(in.special.sep);
  for (int i = 0; i < k; ++i) t.push_back(t[key_begin + i]);
  seq.count = k;
}

// [BOS] k1 v1 .. kL vL [SEP] kq vq, distinct keys
void draw_recall(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
  std::vector<int32_t>& t = seq.tokens;
  const int n = in.n_symbols;
  // Distinct keys: a partial Fisher-Yates shuffle of 0..n−1.
  std::vector<int32_t>& keys = seq.scratch;
  keys.resize(n);
  std::iota(keys.begin(), keys.end(), 0);
  for (int i = 0; i < length; ++i) {
    std::swap(keys[i], keys[static_cast<size_t>(rng.uniform_int(i, n - 1))]);
  }
  for (int i = 0; i < length; ++i) {
    t.push_back(keys[i]);
    t.push_back(in.symbol(rng));
  }
  const int q = static_cast<int>(rng.uniform_int(1, length));
  t.push_back(in.special.sep);
  seq.first = static_cast<int>(t.size());
  t.push_back(t[2 * q - 1]);  // k_q
  t.push_back(t[2 * q]);      // v_q
  seq.count = 1;
}

// [BOS] x1 .. xL [SEP] then the input again, in order or reversed.
template <bool kReversed>
void draw_copy(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
  std::vector<int32_t>& t = seq.tokens;
  for (int i = 0; i < length; ++i) t.push_back(in.symbol(rng));
  seq.first = static_cast<int>(t.size());
  t.push_back(in.special.sep);
  for (int i = 0; i < length; ++i) t.push_back(t[kReversed ? length - i : 1 + i]);
  seq.count = length;
}

// [BOS] b1 .. bL [SEP] p, p = XOR of the bits
void draw_parity(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
  int32_t parity = 0;
  for (int i = 0; i < length; ++i) {
    const int32_t b = rng.bit() ? 1 : 0;
    seq.tokens.push_back(b);
    parity ^= b;
  }
  end_with_answer(in.special.sep, parity, seq);
}

int64_t copy_tokens(const TokenTaskSettings&, int length) {
  return 2 * int64_t{length} + 2;
}
int whole_input_answers(const TokenTaskSettings&, int length) {
  return length;
}
int one_answer(const TokenTaskSettings&, int) {
  return 1;
}

}  // namespace

extern const TokenTaskMath kPasskey;
const TokenTaskMath kPasskey{
    // key_length + 1, held in int whatever key_length is
    .shortest =
        [](const TokenTaskSettings& s) {
          return static_cast<int>(std::clamp<int64_t>(int64_t{s.key_length} + 1, 1, INT32_MAX));
        },
    .shortest_why = "its key of --key-length symbols and one more",
    .tokens = [](const TokenTaskSettings& s,
                 int length) { return int64_t{length} + 2 + s.key_length; },
    .answer_rows = [](const TokenTaskSettings& s, int) { return s.key_length; },
    .draw = draw_passkey,
    .check =
        [](const TokenTaskSettings& s, int l_min, int) {
          if (s.key_length < 1)
            throw UsageError(
                fmt::format("--key-length (key_length) must be >= 1, got {}", s.key_length));
          const int shortest = kPasskey.shortest(s);
          if (l_min < shortest)
            throw UsageError(fmt::format(
                "a passkey of {} symbols (--key-length, key_length) needs length >= {}, got {}",
                s.key_length, shortest, l_min));
        },
    // a = lround(depth · (L − k − 1)) fill tokens after BOS (half away from zero)
    .depth_fill =
        [](const TokenTaskSettings& s, int length, double depth) {
          return static_cast<int>(std::lround(depth * (length - s.key_length - 1)));
        },
};

extern const TokenTaskMath kRecall{
    .tokens = [](const TokenTaskSettings&, int length) { return 2 * int64_t{length} + 4; },
    .answer_rows = one_answer,
    .draw = draw_recall,
    .check =
        [](const TokenTaskSettings& s, int, int l_max) {
          if (l_max > s.n_symbols)
            throw UsageError(fmt::format(
                "--n-symbols (n_symbols) {} is a vocabulary too small for the task: recall at "
                "length {} needs {} distinct keys (recall lengths must be <= n_symbols)",
                s.n_symbols, l_max, l_max));
        },
};

extern const TokenTaskMath kCopy{
    .tokens = copy_tokens, .answer_rows = whole_input_answers, .draw = draw_copy<false>};

extern const TokenTaskMath kReverse{
    .tokens = copy_tokens, .answer_rows = whole_input_answers, .draw = draw_copy<true>};

extern const TokenTaskMath kParity{
    .alphabet = [](const TokenTaskSettings&) { return 2; },  // the bits
    .tokens = [](const TokenTaskSettings&, int length) { return int64_t{length} + 3; },
    .answer_rows = one_answer,
    .draw = draw_parity,
};

}  // namespace lenlab::tasks
