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
#include <cstdint>
#include <string>

#include "core/rng.hpp"
#include "tasks/task.hpp"
#include "tasks/token_sequence.hpp"

namespace lenlab {

struct TokenTaskSettings;
struct SpecialTokens;

bool is_chomsky_task(TaskKind task);  // the tasks above (not parity and reverse)
// The study's level in the hierarchy of each of its 15 tasks (parity and reverse among them):
// "regular", "deterministic context-free" or "context-sensitive"; "" for lenlab's other tasks.
std::string chomsky_level(TaskKind task);
// Whether the task reads settings.modulus; settings.n_symbols (any token task).
bool chomsky_uses_modulus(TaskKind task);
bool chomsky_uses_n_symbols(TaskKind task);

// The functions below take a task of is_chomsky_task (std::logic_error otherwise).
int chomsky_content_symbols(TaskKind task, const TokenTaskSettings& settings);
// The shortest length the task is defined at: 3 for solve-equation and the binary tasks (x = v;
// two numbers and an operator), 2 for missing-duplicate-string, 1 for the others.
int chomsky_shortest_length(TaskKind task);
// Tokens of every sequence of length L, BOS and the output's padding included.
int64_t chomsky_sequence_tokens(TaskKind task, int length);
// Answer rows of a sequence of length L: exact, or for the tasks that end with END (stack and
// binary tasks) the most a sequence has (its output's slots).
int chomsky_answer_rows(TaskKind task, int length);
// Appends the input, SEP and the output of one sequence of length L to seq.tokens (BOS is
// already there) and sets its answer rows.
void draw_chomsky_sequence(TaskKind task, const TokenTaskSettings& settings,
                           const SpecialTokens& special, int length, Rng& rng, TokenSequence& seq);

}  // namespace lenlab
