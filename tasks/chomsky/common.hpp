#pragma once
// The tasks of the Chomsky-hierarchy benchmark (Delétang et al. 2023; Ruoss et al. 2023 scored the
// positional encodings on them) in lenlab's token format: [BOS] input [SEP] output, each output
// token predicted by teacher forcing from the row before it. docs/tasks.md gives each with an
// example and every difference from the study's format; parity and reverse are the study's
// parity_check and reverse_string (tasks/token_tasks.hpp).
//
// Content symbols (the vocabulary is these, then BOS SEP FILL MARK); m = settings.modulus, 5 by
// default as in the study; n = settings.n_symbols (the study's vocab_size):
//   even-pairs                   2      bits
//   cycle-navigation             max(m, 3)  moves 0 1 2 (left, stay, right), positions 0..m−1
//   modular-arithmetic           m + 3  digits 0..m−1, + − × as m, m+1, m+2
//   modular-arithmetic-brackets  m + 5  digits, + − × ( ) as m .. m+4
//   solve-equation               m + 6  digits, + − ( ) x = as m .. m+5 (the study's numbering)
//   stack-manipulation           6      bits, POP 2, PUSH 0 as 3, PUSH 1 as 4, END 5
//   duplicate-string, odds-first, bucket-sort   n
//   missing-duplicate-string     4      bits, the missing bit's mark 2, the pad 3
//   binary-addition, -multiplication  4  bits, the operator (+ or ×) 2, END 3
//   compute-sqrt                 2      bits
//
// Length L is the input's tokens, as the study counts them; the output follows SEP:
//   even-pairs          b1..bL → 1 token: 1 when b1 ≠ bL (an odd number of unequal pairs)
//   cycle-navigation    moves → the position on a cycle of m from 0 after Σ (move − 1)
//   modular-arithmetic  d o d .. d of L tokens (L − 1 for an even L) → its value mod m, × first
//   modular-arithmetic-brackets  a fully bracketed expression of L tokens (the study's grammar:
//                       d, −d, (d), (−d), or (left op right)) → its value mod m
//   solve-equation      a bracketed expression of L − 2 tokens with + and − only, one digit
//                       replaced by x, then = v → the digit x stands for (L >= 3)
//   stack-manipulation  k bits (a stack, bottom first) then L − k actions → the final stack, top
//                       first, then END; the output's L + 1 slots are padded with FILL
//   duplicate-string    s → s s (2L tokens)
//   missing-duplicate-string  s s (L/2 symbols each) with one bit replaced by 2, then 3 when L is
//                       odd → the replaced bit (L >= 2)
//   odds-first          s → s2 s4 .. then s1 s3 .. (as the study's code orders them)
//   binary-addition     a + b, little-endian, p and L − 1 − p bits, a, b >= 1 → a + b
//                       little-endian without high zeros, then END, padded to L + 1 (L >= 3)
//   binary-multiplication  a × b as above → a × b, END, padded to L (L >= 3)
//   compute-sqrt        x of L bits, big-endian, x >= 1 → floor(sqrt(x)) in ⌈L/2⌉ bits
//   bucket-sort         s → s sorted ascending
// Answer rows: every output token up to END (the study's accuracy mask), none of the padding.
//
// Each task's math is a TokenTaskMath in this folder's file of its level (regular.cpp,
// context_free.cpp, context_sensitive.cpp); this header holds what they share.
#include <gmp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "tasks/token_task_math.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab::tasks::chomsky {

inline int modulo(int64_t value, int m) {
  return static_cast<int>(((value % m) + m) % m);
}

// The modulus of a task that reads it (its digits are tokens): UsageError outside 2..kMaxModulus.
int checked_modulus(const TokenTaskSettings& settings, const char* task);

// The token ids of an arithmetic task's symbols after its digits 0..m−1 (−1: not in its alphabet).
struct ArithmeticTokens {
  int32_t plus, minus, times, open, close, unknown, equals;
};

// Appends a fully bracketed expression of exactly `length` tokens, the study's grammar
// (modular_arithmetic_brackets.py): 1 d, 2 −d, 3 (d), 4 (−d), and from 5 on ( left op right ) with
// left's length uniform in 1..length − 4; op uniform over + − (and × when op.times >= 0).
// Returns its value mod m.
int append_bracketed(int length, int m, const ArithmeticTokens& op, Rng& rng,
                     std::vector<int32_t>& out);

// Appends `n` uniform bits not all zero (a number in 1..2^n − 1, the study's draw) to `out`.
void append_nonzero_bits(int n, Rng& rng, std::vector<int32_t>& out);

// A GMP integer that clears itself.
struct BigInt {
  mpz_t z;
  BigInt() { mpz_init(z); }
  ~BigInt() { mpz_clear(z); }
  BigInt(const BigInt&) = delete;
  BigInt& operator=(const BigInt&) = delete;
};
// bits[0] is the least significant.
void set_little_endian(BigInt& x, const int32_t* bits, int n);
// Appends x's bits, least significant first, without high zeros (x >= 1).
void append_little_endian(const BigInt& x, std::vector<int32_t>& out);

// Ends a sequence whose output is one token (held in seq.scratch, no allocation per sequence).
inline void end_with_one(const SpecialTokens& special, int32_t answer, TokenSequence& seq) {
  seq.scratch.assign(1, answer);
  end_with_output(special, seq.scratch, 1, seq);
}

// Tokens of a sequence whose input has `input` tokens and whose output `slots`: BOS, input, SEP,
// output.
inline int64_t sequence_tokens(int64_t input, int64_t slots) {
  return 1 + input + 1 + slots;
}

// The sizes of a task whose output is one token.
inline int one_answer(const TokenTaskSettings&, int) {
  return 1;
}
inline int64_t one_answer_tokens(const TokenTaskSettings&, int length) {
  return sequence_tokens(length, 1);
}

}  // namespace lenlab::tasks::chomsky
