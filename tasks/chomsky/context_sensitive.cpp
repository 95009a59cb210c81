// The Chomsky-hierarchy study's context-sensitive tasks (tasks/chomsky/common.hpp has their
// formats): duplicate-string, missing-duplicate-string, odds-first, binary-addition,
// binary-multiplication, compute-sqrt and bucket-sort.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tasks/chomsky/common.hpp"

namespace lenlab::tasks {
namespace {

// missing-duplicate-string's mark of the missing bit and its pad for an odd L.
constexpr int32_t kMissing = 2, kPad = 3;
// The binary tasks' tokens after the bits.
constexpr int32_t kBinaryOperator = 2, kBinaryEnd = 3;

// s, L symbols of n_symbols, then the output the `order` of the input gives.
template <class Order>
void draw_rearranged(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq, int slots,
                     Order order) {
  std::vector<int32_t>& t = seq.tokens;
  const size_t input_begin = t.size();
  for (int i = 0; i < length; ++i) t.push_back(in.symbol(rng));
  std::vector<int32_t>& answer = seq.scratch;
  answer.clear();
  order(t.begin() + static_cast<std::ptrdiff_t>(input_begin), t.end(), answer);
  end_with_output(in.special, answer, slots, seq);
}

// a + b or a × b, little-endian, p and L − 1 − p bits, p uniform in 1..L − 2, each number uniform
// in 1..2^bits − 1 (zero-filled to its bits, so its high bits may be 0) → the result
// little-endian without high zeros, then END, padded to the slots.
template <bool kMultiply>
void draw_binary(const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
  std::vector<int32_t>& t = seq.tokens;
  const size_t input_begin = t.size();
  const int p = static_cast<int>(rng.uniform_int(1, length - 2));
  const int q = length - 1 - p;
  chomsky::append_nonzero_bits(p, rng, t);
  t.push_back(kBinaryOperator);
  chomsky::append_nonzero_bits(q, rng, t);
  chomsky::BigInt a, b;
  chomsky::set_little_endian(a, t.data() + input_begin, p);
  chomsky::set_little_endian(b, t.data() + input_begin + p + 1, q);
  if (kMultiply)
    mpz_mul(a.z, a.z, b.z);
  else
    mpz_add(a.z, a.z, b.z);
  std::vector<int32_t>& answer = seq.scratch;
  answer.clear();
  chomsky::append_little_endian(a, answer);
  answer.push_back(kBinaryEnd);
  end_with_output(in.special, answer, kMultiply ? length : length + 1, seq);
}

int shortest_binary(const TokenTaskSettings&) {
  return 3;
}
constexpr const char* kBinaryWhy = "two numbers of one bit and the operator between them";
int binary_alphabet(const TokenTaskSettings&) {
  return 4;  // bits, the operator (+ or ×), END
}
int input_length_answers(const TokenTaskSettings&, int length) {
  return length;
}
int64_t input_length_tokens(const TokenTaskSettings&, int length) {
  return chomsky::sequence_tokens(length, length);
}

}  // namespace

// s → s s (2L tokens)
extern const TokenTaskMath kDuplicateString{
    .tokens = [](const TokenTaskSettings&,
                 int length) { return chomsky::sequence_tokens(length, 2 * int64_t{length}); },
    .answer_rows = [](const TokenTaskSettings&, int length) { return 2 * length; },
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          draw_rearranged(in, length, rng, seq, 2 * length, [](auto begin, auto end, auto& out) {
            out.insert(out.end(), begin, end);
            out.insert(out.end(), begin, end);
          });
        },
};

// s s (L/2 bits each) with one bit replaced by 2, then 3 when L is odd → the replaced bit (L >= 2)
extern const TokenTaskMath kMissingDuplicateString{
    .alphabet = [](const TokenTaskSettings&) { return 4; },  // bits, the mark, the pad
    .shortest = [](const TokenTaskSettings&) { return 2; },
    .shortest_why = "a string of one bit and its copy",
    .tokens = [](const TokenTaskSettings&,
                 int length) { return chomsky::sequence_tokens(length, 1); },
    .answer_rows = [](const TokenTaskSettings&, int) { return 1; },
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          std::vector<int32_t>& t = seq.tokens;
          const size_t input_begin = t.size();
          const int half = length / 2;
          for (int i = 0; i < half; ++i) t.push_back(rng.bit() ? 1 : 0);
          for (int i = 0; i < half; ++i) t.push_back(t[input_begin + i]);
          const size_t at = input_begin + static_cast<size_t>(rng.uniform_int(0, 2 * half - 1));
          const int32_t bit = t[at];
          t[at] = kMissing;
          if (length % 2 == 1) t.push_back(kPad);
          chomsky::end_with_one(in.special, bit, seq);
        },
};

// s → s2 s4 .. then s1 s3 .. (the study's code: s[1::2] then s[::2], 0-based)
extern const TokenTaskMath kOddsFirst{
    .tokens = input_length_tokens,
    .answer_rows = input_length_answers,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          draw_rearranged(in, length, rng, seq, length, [length](auto input, auto, auto& out) {
            for (int start : {1, 0})
              for (int i = start; i < length; i += 2) out.push_back(input[i]);
          });
        },
};

extern const TokenTaskMath kBinaryAddition{
    .alphabet = binary_alphabet,
    .shortest = shortest_binary,
    .shortest_why = kBinaryWhy,
    .tokens = [](const TokenTaskSettings&,
                 int length) { return chomsky::sequence_tokens(length, int64_t{length} + 1); },
    .answer_rows = [](const TokenTaskSettings&, int length) { return length + 1; },
    .draw = draw_binary<false>,
};

extern const TokenTaskMath kBinaryMultiplication{
    .alphabet = binary_alphabet,
    .shortest = shortest_binary,
    .shortest_why = kBinaryWhy,
    .tokens = input_length_tokens,
    .answer_rows = input_length_answers,
    .draw = draw_binary<true>,
};

// x of L bits, big-endian, x >= 1 → floor(sqrt(x)) in ⌈L/2⌉ bits
extern const TokenTaskMath kComputeSqrt{
    .alphabet = [](const TokenTaskSettings&) { return 2; },
    .tokens =
        [](const TokenTaskSettings&, int length) {
          return chomsky::sequence_tokens(length, (int64_t{length} + 1) / 2);
        },
    .answer_rows = [](const TokenTaskSettings&, int length) { return (length + 1) / 2; },
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          std::vector<int32_t>& t = seq.tokens;
          const size_t input_begin = t.size();
          chomsky::append_nonzero_bits(length, rng, t);  // big-endian: the top bit first
          chomsky::BigInt x;
          for (int i = 0; i < length; ++i)
            if (t[input_begin + i] == 1) mpz_setbit(x.z, static_cast<mp_bitcnt_t>(length - 1 - i));
          mpz_sqrt(x.z, x.z);
          const int slots = (length + 1) / 2;
          std::vector<int32_t>& answer = seq.scratch;
          answer.clear();
          for (int i = slots - 1; i >= 0; --i) answer.push_back(mpz_tstbit(x.z, i));
          end_with_output(in.special, answer, slots, seq);
        },
};

// s → s sorted ascending
extern const TokenTaskMath kBucketSort{
    .tokens = input_length_tokens,
    .answer_rows = input_length_answers,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          draw_rearranged(in, length, rng, seq, length, [](auto begin, auto end, auto& out) {
            out.assign(begin, end);
            std::sort(out.begin(), out.end());
          });
        },
};

}  // namespace lenlab::tasks
