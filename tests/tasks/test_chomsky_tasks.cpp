// Tests for tasks/chomsky/: the Chomsky-hierarchy benchmark's context-free and
// context-sensitive tasks (the regular ones: test_token_tasks.cpp). Each answer is checked against
// brute force written apart from the generator (a parser, bit-vector arithmetic, a search over the
// unknown), every input of a small length is drawn, and the study's own examples are answered.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "tasks/token_tasks.hpp"
#include "tests/support/token_task_support.hpp"

namespace lenlab {
using namespace lenlab::test;
namespace {

using Tokens = std::vector<int32_t>;

// ---- Unbounded integers as little-endian bit vectors (no GMP: the generator uses it).
using Bits = std::vector<int>;

Bits trimmed(Bits b) {
  while (!b.empty() && b.back() == 0) b.pop_back();
  return b;
}

Bits add(const Bits& a, const Bits& b) {
  Bits r;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    const int s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
    r.push_back(s % 2);
    carry = s / 2;
  }
  return trimmed(r);
}

Bits multiply(const Bits& a, const Bits& b) {
  Bits r(a.size() + b.size() + 1, 0);  // schoolbook: b added at every 1 bit of a
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0) continue;
    int carry = 0;
    for (size_t j = 0; j < b.size() || carry; ++j) {
      const int s = r[i + j] + (j < b.size() ? b[j] : 0) + carry;
      r[i + j] = s % 2;
      carry = s / 2;
    }
  }
  return trimmed(r);
}

bool less_equal(const Bits& a, const Bits& b) {
  const Bits x = trimmed(a), y = trimmed(b);
  if (x.size() != y.size()) return x.size() < y.size();
  for (size_t i = x.size(); i-- > 0;)
    if (x[i] != y[i]) return x[i] < y[i];
  return true;
}

// floor(sqrt(x)) one bit at a time from the top: a bit stays when the square stays <= x.
Bits integer_sqrt(const Bits& x, int bits) {
  Bits r(bits, 0);
  for (int i = bits - 1; i >= 0; --i) {
    r[i] = 1;
    if (!less_equal(multiply(r, r), x)) r[i] = 0;
  }
  return r;
}

// ---- Fully bracketed expressions, read by recursive descent (the grammar, not the generator):
// E := d | −d | ( E ) | ( E op E ); every value mod m.
struct Symbols {
  int m;
  int32_t plus, minus, times, open, close;  // −1: not in the alphabet
};

std::optional<int> parse(const Tokens& e, size_t& i, const Symbols& s) {
  if (i >= e.size()) return std::nullopt;
  const auto digit = [&](size_t at) { return at < e.size() && e[at] >= 0 && e[at] < s.m; };
  if (digit(i)) return e[i++];
  if (e[i] == s.minus && digit(i + 1)) {
    i += 2;
    return (s.m - e[i - 1]) % s.m;
  }
  if (e[i] != s.open) return std::nullopt;
  ++i;
  const std::optional<int> left = parse(e, i, s);
  if (!left || i >= e.size()) return std::nullopt;
  if (e[i] == s.close) {
    ++i;
    return left;
  }
  const int32_t op = e[i++];
  if (op != s.plus && op != s.minus && op != s.times) return std::nullopt;
  const std::optional<int> right = parse(e, i, s);
  if (!right || i >= e.size() || e[i] != s.close) return std::nullopt;
  ++i;
  const long long v = op == s.plus    ? *left + *right
                      : op == s.minus ? *left - *right
                                      : 1LL * *left * *right;
  return static_cast<int>(((v % s.m) + s.m) % s.m);
}

std::optional<int> evaluate(const Tokens& e, const Symbols& s) {
  size_t i = 0;
  const std::optional<int> v = parse(e, i, s);
  return v && i == e.size() ? v : std::nullopt;
}

// ---- Each task's answer from its input; nullopt when the input is not one the task draws.
using Answer = std::optional<Tokens>;

Answer stack_answer(const Tokens& in) {
  // Bits (the stack, bottom first), at least one and at most L − 1 (1 at L = 1), then actions.
  size_t k = 0;
  while (k < in.size() && (in[k] == 0 || in[k] == 1)) ++k;
  if (k == 0 || (in.size() > 1 && k > in.size() - 1)) return std::nullopt;
  Tokens stack(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
  for (size_t i = k; i < in.size(); ++i) {
    if (in[i] == 2) {
      if (!stack.empty()) stack.pop_back();
    } else if (in[i] == 3 || in[i] == 4) {
      stack.push_back(in[i] - 3);
    } else {
      return std::nullopt;
    }
  }
  Tokens out(stack.rbegin(), stack.rend());
  out.push_back(5);
  return out;
}

Answer brackets_answer(const Tokens& in, int m) {
  const std::optional<int> v = evaluate(in, {m, m, m + 1, m + 2, m + 3, m + 4});
  return v ? Answer(Tokens{*v}) : std::nullopt;
}

// The one digit that makes the equation true (+ and − only, so it is unique).
Answer equation_answer(const Tokens& in, int m) {
  const Symbols s{m, m, m + 1, -1, m + 2, m + 3};
  const int32_t x = m + 4, equals = m + 5;
  if (in.size() < 3 || in[in.size() - 2] != equals || in.back() < 0 || in.back() >= m)
    return std::nullopt;
  Tokens e(in.begin(), in.end() - 2);
  if (std::count(e.begin(), e.end(), x) != 1) return std::nullopt;
  const auto at = std::find(e.begin(), e.end(), x);
  std::vector<int> solutions;
  for (int d = 0; d < m; ++d) {
    *at = d;
    if (evaluate(e, s) == std::optional<int>(in.back())) solutions.push_back(d);
  }
  return solutions.size() == 1 ? Answer(Tokens{solutions[0]}) : std::nullopt;
}

Answer duplicate_answer(const Tokens& in) {
  Tokens out = in;
  out.insert(out.end(), in.begin(), in.end());
  return out;
}

Answer missing_answer(const Tokens& in) {
  const size_t half = in.size() / 2;
  if (in.size() % 2 == 1 && in.back() != 3) return std::nullopt;
  int marks = 0;
  int32_t bit = -1;
  for (size_t i = 0; i < half; ++i) {
    const int32_t a = in[i], b = in[half + i];
    if (a == 2 && (b == 0 || b == 1))
      ++marks, bit = b;
    else if (b == 2 && (a == 0 || a == 1))
      ++marks, bit = a;
    else if (a != b || a > 1)
      return std::nullopt;
  }
  return marks == 1 ? Answer(Tokens{bit}) : std::nullopt;
}

Answer odds_first_answer(const Tokens& in) {
  Tokens out;  // 1-based even positions first, then the odd ones (the study's code)
  for (size_t i = 2; i <= in.size(); i += 2) out.push_back(in[i - 1]);
  for (size_t i = 1; i <= in.size(); i += 2) out.push_back(in[i - 1]);
  return out;
}

Answer binary_answer(const Tokens& in, bool multiply_them) {
  const auto op = std::find(in.begin(), in.end(), 2);
  if (op == in.begin() || op == in.end() || op + 1 == in.end() ||
      std::count(in.begin(), in.end(), 2) != 1)
    return std::nullopt;
  const Bits a(in.begin(), op), b(op + 1, in.end());
  if (trimmed(a).empty() || trimmed(b).empty()) return std::nullopt;  // both >= 1
  const Bits r = multiply_them ? multiply(a, b) : add(a, b);
  Tokens out(r.begin(), r.end());
  out.push_back(3);
  return out;
}

Answer sqrt_answer(const Tokens& in) {
  const Bits x(in.rbegin(), in.rend());  // big-endian in, little-endian here
  if (trimmed(x).empty()) return std::nullopt;
  const int bits = static_cast<int>((in.size() + 1) / 2);
  const Bits r = integer_sqrt(x, bits);
  return Tokens(r.rbegin(), r.rend());
}

Answer bucket_answer(const Tokens& in, int n) {
  Tokens out;
  for (int v = 0; v < n; ++v) out.insert(out.end(), std::count(in.begin(), in.end(), v), v);
  return out;
}

// One drawn sequence split at SEP: its input, and its answer (the tokens its answer rows predict).
struct Split {
  Tokens input, answer;
};

// Checks the layout every Chomsky-hierarchy sequence has: BOS, L input symbols, SEP, the answer
// (read at SEP's row on), then FILL up to the output's slots.
Split split_sequence(const Batch& b, const std::vector<int32_t>& ro, int sq, TaskKind task,
                     const TokenTaskSettings& s, int length) {
  const Tokens t = sequence_of(b, sq);
  const SpecialTokens sp = special_tokens(task, s);
  const int n = token_content_symbols(task, s);
  REQUIRE(t.size() == static_cast<size_t>(token_sequence_tokens(task, s, length)));
  const int sep = task == TaskKind::kModularArithmetic && length % 2 == 0 ? length : length + 1;
  CHECK(t[0] == sp.bos);
  REQUIRE(t[sep] == sp.sep);
  CHECK(all_content(t, 1, sep, n));
  const std::vector<int> rows = answer_rows(b, ro, sq);
  REQUIRE(!rows.empty());
  CHECK(rows == range(sep, static_cast<int>(rows.size())));
  const size_t end = sep + 1 + rows.size();
  CHECK(all_content(t, sep + 1, end, n));
  for (size_t i = end; i < t.size(); ++i) CHECK(t[i] == sp.fill);
  return {Tokens(t.begin() + 1, t.begin() + sep), Tokens(t.begin() + sep + 1, t.begin() + end)};
}

}  // namespace

TEST_CASE("the context-free and context-sensitive tasks: every answer against brute force") {
  TokenTaskSettings s;
  s.n_symbols = 3;  // duplicate-string, odds-first, bucket-sort
  struct Case {
    TaskKind task;
    std::function<Answer(const Tokens&)> answer;
    int small_length;  // every input of this length is drawn: inputs_at_small of them
    size_t inputs_at_small;
  };
  const std::vector<Case> cases = {
      {TaskKind::kStackManipulation, stack_answer, 3, 30},  // 1 bit, 2 actions; 2 bits, 1 action
      {TaskKind::kModularArithmeticBrackets,
       [](const Tokens& in) { return brackets_answer(in, 5); }, 5, 75},  // (d op d)
      {TaskKind::kSolveEquation, [](const Tokens& in) { return equation_answer(in, 5); }, 7,
       100},  // (d ± d) = v with either digit x
      {TaskKind::kDuplicateString, duplicate_answer, 3, 27},
      {TaskKind::kMissingDuplicateString, missing_answer, 5, 16},  // 2 bits, 4 places, the pad
      {TaskKind::kOddsFirst, odds_first_answer, 3, 27},
      {TaskKind::kBinaryAddition, [](const Tokens& in) { return binary_answer(in, false); }, 5,
       23},  // p = 1, 2, 3 bits for a: 1·7 + 3·3 + 7·1
      {TaskKind::kBinaryMultiplication, [](const Tokens& in) { return binary_answer(in, true); }, 5,
       23},
      {TaskKind::kComputeSqrt, sqrt_answer, 4, 15},
      {TaskKind::kBucketSort, [](const Tokens& in) { return bucket_answer(in, 3); }, 3, 27},
  };
  for (const Case& c : cases) {
    CAPTURE(task_name(c.task));
    for (const int length : {1, 2, 3, 4, 5, 6, 7, 13, 41, 300}) {
      if (length < shortest_length(c.task, s)) continue;
      CAPTURE(length);
      // Enough at the small length to draw every input; fewer elsewhere (a debug build's checks).
      const int samples = length == c.small_length ? 1500 : length == 300 ? 12 : 300;
      const Batch b = token_eval_batch(c.task, s, nullptr, length, samples, 11);
      const auto ro = check_common(b, token_vocab_size(c.task, s));
      std::set<Tokens> inputs;
      for (int sq = 0; sq < b.n_seq(); ++sq) {
        const Split got = split_sequence(b, ro, sq, c.task, s, length);
        CHECK(got.input.size() == static_cast<size_t>(length));
        const Answer want = c.answer(got.input);
        REQUIRE(want.has_value());  // an input the task draws
        CHECK(got.answer == *want);
        CHECK(got.answer.size() <= static_cast<size_t>(token_answer_rows(c.task, s, length)));
        inputs.insert(got.input);
      }
      if (length == c.small_length) CHECK(inputs.size() == c.inputs_at_small);
    }
  }
}

TEST_CASE("the study's examples, answered by the brute force above") {
  CHECK(stack_answer({0, 1, 1, 0, 4, 2, 2}) == Tokens{1, 1, 0, 5});  // 0110 → 01101 → 0110 → 011
  CHECK(brackets_answer({8, 3, 7, 4, 9}, 5) == Tokens{2});           // (3 × 4) = 12
  CHECK(equation_answer({7, 3, 6, 9, 8, 10, 2}, 5) == Tokens{1});  // (3 − x) = 2
  CHECK(missing_answer({0, 1, 1, 0, 0, 2, 1, 0}) == Tokens{1});
  CHECK(missing_answer({1, 0, 1, 1, 2, 1, 3}) == Tokens{0});
  CHECK(odds_first_answer({0, 0, 1, 1, 0, 1, 0, 1}) == Tokens{0, 1, 1, 1, 0, 1, 0, 0});
  CHECK(binary_answer({1, 1, 2, 0, 1}, false) == Tokens{1, 0, 1, 3});  // 3 + 2 = 5
  CHECK(binary_answer({1, 1, 2, 0, 1}, true) == Tokens{0, 1, 1, 3});   // 3 × 2 = 6
  CHECK(sqrt_answer({1, 0, 0, 1, 0, 1}) == Tokens{1, 1, 0});           // sqrt(37) → 6
  CHECK(bucket_answer({1, 0, 2, 0, 4, 1, 1, 2}, 5) == Tokens{0, 0, 1, 1, 1, 2, 2, 4});
  // Inputs the tasks never draw are refused by the brute force, so it cannot pass them by.
  CHECK_FALSE(brackets_answer({8, 3, 7, 4}, 5).has_value());
  CHECK_FALSE(missing_answer({0, 1, 1, 0}).has_value());
  CHECK_FALSE(binary_answer({0, 0, 2, 1}, false).has_value());
}

TEST_CASE("solve-equation's unknown lands on a digit as the study places it") {
  // At L = 7 the expression is (d ± d): a uniform index 0..4 moved forward to a digit gives the
  // first digit for 0, 1 and 4 (wrapping past the bracket), the second for 2 and 3: 3/5 and 2/5.
  TokenTaskSettings s;
  const Batch b = token_eval_batch(TaskKind::kSolveEquation, s, nullptr, 7, 4000, 3);
  int first = 0;
  for (int sq = 0; sq < b.n_seq(); ++sq) first += sequence_of(b, sq)[2] == 9;  // x is m + 4
  CHECK(first / 4000.0 == doctest::Approx(0.6).epsilon(0.05));
}

TEST_CASE("the modulus sets the arithmetic tasks' digits and the cycle") {
  for (const int m : {2, 3, 7, 11}) {
    CAPTURE(m);
    TokenTaskSettings s;
    s.modulus = m;
    CHECK(token_content_symbols(TaskKind::kCycleNavigation, s) == std::max(m, 3));
    CHECK(token_content_symbols(TaskKind::kModularArithmetic, s) == m + 3);
    CHECK(token_content_symbols(TaskKind::kModularArithmeticBrackets, s) == m + 5);
    CHECK(token_content_symbols(TaskKind::kSolveEquation, s) == m + 6);
    for (const int length : {5, 9, 20}) {
      const Batch mab =
          token_eval_batch(TaskKind::kModularArithmeticBrackets, s, nullptr, length, 300, 2);
      const auto ro = check_common(mab, m + 9);
      std::set<int32_t> values;
      for (int sq = 0; sq < mab.n_seq(); ++sq) {
        const Split got =
            split_sequence(mab, ro, sq, TaskKind::kModularArithmeticBrackets, s, length);
        CHECK(brackets_answer(got.input, m) == got.answer);
        values.insert(got.answer[0]);
      }
      if (length == 20) CHECK(values.size() == static_cast<size_t>(m));  // every residue
      const Batch eq = token_eval_batch(TaskKind::kSolveEquation, s, nullptr, length, 300, 2);
      const auto eq_ro = check_common(eq, m + 10);
      for (int sq = 0; sq < eq.n_seq(); ++sq) {
        const Split got = split_sequence(eq, eq_ro, sq, TaskKind::kSolveEquation, s, length);
        CHECK(equation_answer(got.input, m) == got.answer);
      }
      const Batch cycle = token_eval_batch(TaskKind::kCycleNavigation, s, nullptr, length, 300, 2);
      const auto cycle_ro = check_common(cycle, std::max(m, 3) + 4);
      for (int sq = 0; sq < cycle.n_seq(); ++sq) {
        const Split got =
            split_sequence(cycle, cycle_ro, sq, TaskKind::kCycleNavigation, s, length);
        long long position = 0;
        for (const int32_t move : got.input) {
          CHECK(move <= 2);
          position += move - 1;
        }
        CHECK(got.answer == Tokens{static_cast<int32_t>(((position % m) + m) % m)});
      }
    }
  }
}

TEST_CASE("lengths no stack can hold: the bracketed tasks draw without recursion") {
  // 200 000 tokens: a generator that recursed per bracket would go 50 000 calls deep.
  TokenTaskSettings s;
  const Batch b = token_eval_batch(TaskKind::kModularArithmeticBrackets, s, nullptr, 200000, 2, 1);
  CHECK(b.n_tokens() == 2 * (200000 + 3));
  for (int sq = 0; sq < 2; ++sq) {
    const Tokens t = sequence_of(b, sq);
    CHECK(std::count(t.begin(), t.end(), 8) == std::count(t.begin(), t.end(), 9));  // ( and )
  }
}

}  // namespace lenlab
