// The Chomsky-hierarchy study's regular tasks (tasks/chomsky/common.hpp has their formats):
// even-pairs, cycle-navigation and modular-arithmetic. Parity, the fourth, is
// tasks/basic_token_tasks.cpp's.
#include <cstdint>
#include <vector>

#include "tasks/chomsky/common.hpp"

namespace lenlab::tasks {
namespace {

using chomsky::modulo;

// modular-arithmetic's value: digits at even offsets, operators between them; × binds first, as in
// the study: a − b is a + (−b), each +-separated term a product, the terms' sum taken mod m.
int chain_value(const int32_t* expression, int n_tokens, int m,
                const chomsky::ArithmeticTokens& op) {
  int64_t sum = 0, term = expression[0];
  for (int i = 1; i + 1 < n_tokens; i += 2) {
    const int32_t digit = expression[i + 1];
    if (expression[i] == op.times) {
      term = term * digit % m;
    } else {
      sum = (sum + term) % m;
      term = expression[i] == op.plus ? digit : modulo(-digit, m);
    }
  }
  return modulo(sum + term, m);
}

// Digits 0..m−1, then + − × as m, m+1, m+2.
chomsky::ArithmeticTokens arithmetic_tokens(int m) {
  return {m, m + 1, m + 2, -1, -1, -1, -1};
}

}  // namespace

// b1..bL → 1 token: 1 when b1 ≠ bL (an odd number of unequal pairs)
extern const TokenTaskMath kEvenPairs{
    .alphabet = [](const TokenTaskSettings&) { return 2; },
    .tokens = chomsky::one_answer_tokens,
    .answer_rows = chomsky::one_answer,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          std::vector<int32_t>& t = seq.tokens;
          const size_t input_begin = t.size();
          for (int i = 0; i < length; ++i) t.push_back(rng.bit() ? 1 : 0);
          chomsky::end_with_one(in.special, t[input_begin] != t.back() ? 1 : 0, seq);
        },
};

// moves 0 1 2 (left, stay, right) → the position on a cycle of m from 0 after Σ (move − 1)
extern const TokenTaskMath kCycleNavigation{
    .alphabet =
        [](const TokenTaskSettings& s) {
          const int m = chomsky::checked_modulus(s, "cycle-navigation");
          return m > 3 ? m : 3;
        },
    .uses_modulus = true,
    .tokens = chomsky::one_answer_tokens,
    .answer_rows = chomsky::one_answer,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          const int m = in.settings->modulus;
          int position = 0;
          for (int i = 0; i < length; ++i) {
            const int32_t move = static_cast<int32_t>(rng.uniform_int(0, 2));
            seq.tokens.push_back(move);
            position = modulo(position + move - 1, m);
          }
          chomsky::end_with_one(in.special, position, seq);
        },
};

// d o d .. d of L tokens (L − 1 for an even L: an odd number, as the study) → its value mod m
extern const TokenTaskMath kModularArithmetic{
    .alphabet =
        [](const TokenTaskSettings& s) {
          return chomsky::checked_modulus(s, "modular-arithmetic") + 3;
        },
    .uses_modulus = true,
    .tokens =
        [](const TokenTaskSettings&, int length) {
          return chomsky::sequence_tokens(length % 2 == 0 ? length - 1 : length, 1);
        },
    .answer_rows = chomsky::one_answer,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          const int m = in.settings->modulus;
          std::vector<int32_t>& t = seq.tokens;
          const size_t input_begin = t.size();
          const chomsky::ArithmeticTokens op = arithmetic_tokens(m);
          const int n_tokens = length % 2 == 1 ? length : length - 1;
          for (int i = 0; i < n_tokens; ++i)
            t.push_back(static_cast<int32_t>(i % 2 == 0 ? rng.uniform_int(0, m - 1)
                                                        : rng.uniform_int(op.plus, op.times)));
          chomsky::end_with_one(in.special, chain_value(t.data() + input_begin, n_tokens, m, op),
                                seq);
        },
};

}  // namespace lenlab::tasks
