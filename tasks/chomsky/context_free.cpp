// The Chomsky-hierarchy study's deterministic context-free tasks (tasks/chomsky/common.hpp has
// their formats): stack-manipulation, modular-arithmetic-brackets and solve-equation. Reverse, the
// fourth, is tasks/basic_token_tasks.cpp's.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tasks/chomsky/common.hpp"

namespace lenlab::tasks {
namespace {

// Stack manipulation's tokens after the bits 0 and 1.
constexpr int32_t kPop = 2, kPush0 = 3, kPush1 = 4, kStackEnd = 5;

}  // namespace

// k bits (a stack, bottom first) then L − k actions → the final stack, top first, then END; the
// output's L + 1 slots are padded with FILL.
extern const TokenTaskMath kStackManipulation{
    .alphabet = [](const TokenTaskSettings&) { return static_cast<int>(kStackEnd) + 1; },
    .tokens = [](const TokenTaskSettings&,
                 int length) { return chomsky::sequence_tokens(length, int64_t{length} + 1); },
    .answer_rows = [](const TokenTaskSettings&, int length) { return length + 1; },
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          std::vector<int32_t>& t = seq.tokens;
          std::vector<int32_t>& answer = seq.scratch;
          answer.clear();
          // k bits (the stack, bottom first), k uniform in 1..L − 1 (1 at L = 1), then L − k
          // actions uniform over POP, PUSH 0, PUSH 1; a POP of the empty stack does nothing.
          const int k = length == 1 ? 1 : static_cast<int>(rng.uniform_int(1, length - 1));
          for (int i = 0; i < k; ++i) {
            t.push_back(rng.bit() ? 1 : 0);
            answer.push_back(t.back());
          }
          for (int i = k; i < length; ++i) {
            const int32_t action = static_cast<int32_t>(rng.uniform_int(kPop, kPush1));
            t.push_back(action);
            if (action != kPop)
              answer.push_back(action - kPush0);
            else if (!answer.empty())
              answer.pop_back();
          }
          std::reverse(answer.begin(), answer.end());  // top first
          answer.push_back(kStackEnd);
          end_with_output(in.special, answer, length + 1, seq);
        },
};

// A fully bracketed expression of L tokens (the study's grammar: d, −d, (d), (−d), or
// (left op right)) → its value mod m. Digits, then + − × ( ) as m .. m+4.
extern const TokenTaskMath kModularArithmeticBrackets{
    .alphabet =
        [](const TokenTaskSettings& s) {
          return chomsky::checked_modulus(s, "modular-arithmetic-brackets") + 5;
        },
    .uses_modulus = true,
    .tokens = chomsky::one_answer_tokens,
    .answer_rows = chomsky::one_answer,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          const int m = in.settings->modulus;
          const chomsky::ArithmeticTokens op{m, m + 1, m + 2, m + 3, m + 4, -1, -1};
          chomsky::end_with_one(in.special,
                                chomsky::append_bracketed(length, m, op, rng, seq.tokens), seq);
        },
};

// A bracketed expression of L − 2 tokens with + and − only, one digit replaced by x, then = v →
// the digit x stands for (L >= 3). Digits, then + − ( ) x = as m .. m+5 (the study's numbering:
// no ×, its equations use + and −).
extern const TokenTaskMath kSolveEquation{
    .alphabet =
        [](const TokenTaskSettings& s) {
          return chomsky::checked_modulus(s, "solve-equation") + 6;
        },
    .uses_modulus = true,
    .shortest = [](const TokenTaskSettings&) { return 3; },
    .shortest_why = "the shortest equation is x = v",
    .tokens = chomsky::one_answer_tokens,
    .answer_rows = chomsky::one_answer,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          const int m = in.settings->modulus;
          const chomsky::ArithmeticTokens op{m, m + 1, -1, m + 2, m + 3, m + 4, m + 5};
          std::vector<int32_t>& t = seq.tokens;
          const size_t input_begin = t.size();
          // A uniform index, moved forward (cyclically) to the first digit at or after it, is
          // replaced by x (so digits after long bracket runs are likelier, as in the study); then
          // = and the expression's value.
          const int value = chomsky::append_bracketed(length - 2, m, op, rng, t);
          size_t at = input_begin + static_cast<size_t>(rng.uniform_int(0, length - 3));
          while (t[at] >= m) at = at + 1 == t.size() ? input_begin : at + 1;
          const int32_t x = t[at];
          t[at] = op.unknown;
          t.push_back(op.equals);
          t.push_back(value);
          chomsky::end_with_one(in.special, x, seq);
        },
};

}  // namespace lenlab::tasks
