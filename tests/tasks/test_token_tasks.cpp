// Tests for tasks/token_tasks: every format's layout, answer rows, labels and weights. Batches,
// seeding and the settings' checks: test_token_batches.cpp.
#include <doctest/doctest.h>

#include <set>

#include "tests/support/token_task_support.hpp"

namespace lenlab {
using namespace lenlab::test;

TEST_CASE("token vocabulary and special tokens") {
  TokenTaskSettings s;
  s.n_symbols = 10;
  for (const TaskKind t : kTokenTasks) {
    // The fixed alphabets (tasks/chomsky/common.hpp), modulus 5: bits; moves and positions on a
    // cycle of 5; digits 0..4 and + − × (and brackets; + − ( ) x =); bits and stack actions and
    // END; bits, the mark and the pad; bits, the operator and END.
    CAPTURE(task_name(t));
    int n = 10;
    switch (t) {
      case TaskKind::kParity:
      case TaskKind::kEvenPairs:
      case TaskKind::kComputeSqrt:
        n = 2;
        break;
      case TaskKind::kCycleNavigation:
        n = 5;
        break;
      case TaskKind::kModularArithmetic:
        n = 8;
        break;
      case TaskKind::kModularArithmeticBrackets:
        n = 10;
        break;
      case TaskKind::kSolveEquation:
        n = 11;
        break;
      case TaskKind::kStackManipulation:
        n = 6;
        break;
      case TaskKind::kMissingDuplicateString:
      case TaskKind::kBinaryAddition:
      case TaskKind::kBinaryMultiplication:
        n = 4;
        break;
      default:
        break;
    }
    CHECK(token_vocab_size(t, s) == n + 4);
    const SpecialTokens sp = special_tokens(t, s);
    CHECK(sp.bos == n);
    CHECK(sp.sep == n + 1);
    CHECK(sp.fill == n + 2);
    CHECK(sp.mark == n + 3);
  }
  CHECK(token_vocab_size(TaskKind::kParity, s) == 6);
  CHECK_THROWS_AS(token_vocab_size(TaskKind::kMean, s), std::logic_error);
  CHECK_THROWS_AS(check_token_task(TaskKind::kLength, s, 1, 5), std::logic_error);
}

TEST_CASE("passkey layout: fill, mark, key, sep, answer = key") {
  TokenTaskSettings s;
  s.n_symbols = 8;
  s.key_length = 3;
  const SpecialTokens sp = special_tokens(TaskKind::kPasskey, s);
  const int k = 3;
  for (const int length : {4, 10, 11}) {
    const Batch b = token_eval_batch(TaskKind::kPasskey, s, nullptr, length, 40, 7);
    const auto ro = check_common(b, token_vocab_size(TaskKind::kPasskey, s));
    std::set<int> mark_positions;
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const std::vector<int32_t> t = sequence_of(b, sq);
      REQUIRE(t.size() == static_cast<size_t>(length + 2 + k));
      CHECK(t[0] == sp.bos);
      const int sep = length + 1;
      CHECK(t[sep] == sp.sep);
      CHECK(std::count(t.begin(), t.end(), sp.mark) == 1);
      const int mark = static_cast<int>(std::find(t.begin(), t.end(), sp.mark) - t.begin());
      mark_positions.insert(mark);
      REQUIRE(mark + k < sep);
      for (int i = 1; i < mark; ++i) CHECK(t[i] == sp.fill);
      CHECK(all_content(t, mark + 1, mark + 1 + k, 8));
      for (int i = mark + 1 + k; i < sep; ++i) CHECK(t[i] == sp.fill);
      // The answer after SEP is the hidden key, read at rows SEP .. SEP + k − 1.
      for (int i = 0; i < k; ++i) CHECK(t[sep + 1 + i] == t[mark + 1 + i]);
      CHECK(answer_rows(b, ro, sq) == range(sep, k));
    }
    // Random depth: at length 10 (7 places for the key block) 40 sequences use several.
    if (length >= 10) CHECK(mark_positions.size() >= 3);
    if (length == 4) CHECK(mark_positions == std::set<int>{1});
  }
}

TEST_CASE("passkey depth places the key block exactly") {
  TokenTaskSettings s;
  s.n_symbols = 8;
  s.key_length = 3;
  const SpecialTokens sp = special_tokens(TaskKind::kPasskey, s);
  // (length, depth, index of MARK): a = lround(depth · (L − k − 1)), MARK at row 1 + a.
  struct Case {
    int length;
    double depth;
    int mark;
  };
  for (const Case c : {Case{10, 0.0, 1}, Case{10, 1.0, 7}, Case{10, 0.5, 4}, Case{9, 0.5, 4},
                       Case{9, 0.25, 2}, Case{4, 0.5, 1}, Case{10, -0.0, 1}}) {
    CAPTURE(c.length);
    CAPTURE(c.depth);
    const Batch b = token_eval_batch(TaskKind::kPasskey, s, nullptr, c.length, 5, 3, c.depth);
    check_common(b, token_vocab_size(TaskKind::kPasskey, s));
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const std::vector<int32_t> t = sequence_of(b, sq);
      CHECK(t[c.mark] == sp.mark);
      if (c.depth == 0.0) CHECK(t[1] == sp.mark);             // right after BOS
      if (c.depth == 1.0) CHECK(t[c.length] != sp.fill);      // key ends right before SEP
      if (c.depth == 1.0) CHECK(t[c.length - 3] == sp.mark);  // MARK key key key SEP
    }
  }
  // Each (length, depth) cell has its own fixed set; -0 is depth 0.
  const Batch d0 = token_eval_batch(TaskKind::kPasskey, s, nullptr, 10, 5, 3, 0.0);
  const Batch dm0 = token_eval_batch(TaskKind::kPasskey, s, nullptr, 10, 5, 3, -0.0);
  const Batch d5 = token_eval_batch(TaskKind::kPasskey, s, nullptr, 10, 5, 3, 0.5);
  const Batch d5b = token_eval_batch(TaskKind::kPasskey, s, nullptr, 10, 5, 3, 0.5);
  CHECK(d0.tokens == dm0.tokens);
  CHECK(d5.tokens == d5b.tokens);
  CHECK(d5.token.labels != d0.token.labels);  // different keys, not only a moved block
}

TEST_CASE("recall layout: distinct keys, answer = value of the query key") {
  TokenTaskSettings s;
  s.n_symbols = 12;
  const SpecialTokens sp = special_tokens(TaskKind::kRecall, s);
  for (const int n : {1, 5, 12}) {
    const Batch b = token_eval_batch(TaskKind::kRecall, s, nullptr, n, 50, 11);
    const auto ro = check_common(b, token_vocab_size(TaskKind::kRecall, s));
    std::set<int> queried;
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const std::vector<int32_t> t = sequence_of(b, sq);
      REQUIRE(t.size() == static_cast<size_t>(2 * n + 4));
      CHECK(t[0] == sp.bos);
      CHECK(t[2 * n + 1] == sp.sep);
      CHECK(all_content(t, 1, 2 * n + 1, 12));
      std::set<int32_t> keys;
      for (int i = 0; i < n; ++i) keys.insert(t[1 + 2 * i]);
      CHECK(keys.size() == static_cast<size_t>(n));
      const int32_t kq = t[2 * n + 2];
      int q = -1;
      for (int i = 0; i < n; ++i)
        if (t[1 + 2 * i] == kq) q = i;
      REQUIRE(q >= 0);
      queried.insert(q);
      CHECK(t[2 * n + 3] == t[2 + 2 * q]);
      CHECK(answer_rows(b, ro, sq) == std::vector<int>{2 * n + 2});
      CHECK(b.token.labels[ro[sq]] == t[2 + 2 * q]);
    }
    if (n == 5) CHECK(queried.size() == 5);  // q is uniform in 1..n
  }
}

TEST_CASE("copy and reverse layouts: the answer is the input, or reversed") {
  TokenTaskSettings s;
  s.n_symbols = 5;
  for (const TaskKind task : {TaskKind::kCopy, TaskKind::kReverse}) {
    const SpecialTokens sp = special_tokens(task, s);
    for (const int length : {1, 2, 9}) {
      const Batch b = token_eval_batch(task, s, nullptr, length, 20, 4);
      const auto ro = check_common(b, token_vocab_size(task, s));
      for (int sq = 0; sq < b.n_seq(); ++sq) {
        const std::vector<int32_t> t = sequence_of(b, sq);
        REQUIRE(t.size() == static_cast<size_t>(2 * length + 2));
        CHECK(t[0] == sp.bos);
        CHECK(t[length + 1] == sp.sep);
        std::vector<int32_t> input(t.begin() + 1, t.begin() + 1 + length);
        std::vector<int32_t> answer(t.begin() + length + 2, t.end());
        CHECK(all_content(input, 0, input.size(), 5));
        if (task == TaskKind::kReverse) std::reverse(input.begin(), input.end());
        CHECK(answer == input);
        CHECK(answer_rows(b, ro, sq) == range(length + 1, length));
        std::vector<int32_t> labels(b.token.labels.begin() + ro[sq],
                                    b.token.labels.begin() + ro[sq + 1]);
        CHECK(labels == answer);
      }
    }
  }
}

TEST_CASE("parity layout: bits, SEP, XOR") {
  TokenTaskSettings s;
  s.n_symbols = 100;  // ignored: parity's content is the two bits
  const SpecialTokens sp = special_tokens(TaskKind::kParity, s);
  CHECK(sp.bos == 2);
  int ones_answers = 0;
  for (const int length : {1, 6, 13}) {
    const Batch b = token_eval_batch(TaskKind::kParity, s, nullptr, length, 30, 5);
    const auto ro = check_common(b, 6);
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const std::vector<int32_t> t = sequence_of(b, sq);
      REQUIRE(t.size() == static_cast<size_t>(length + 3));
      CHECK(t[0] == 2);
      CHECK(t[length + 1] == 3);
      int x = 0;
      for (int i = 1; i <= length; ++i) {
        CHECK((t[i] == 0 || t[i] == 1));
        x ^= t[i];
      }
      CHECK(t[length + 2] == x);
      CHECK(b.token.labels[ro[sq]] == x);
      CHECK(answer_rows(b, ro, sq) == std::vector<int>{length + 1});
      ones_answers += x;
    }
  }
  CHECK(ones_answers > 10);
  CHECK(ones_answers < 80);
}

namespace {

// Brute force for the regular tasks (docs/tasks.md), written apart from the generators.
int32_t even_pairs_answer(const std::vector<int32_t>& bits) {
  int differing = 0;
  for (size_t i = 0; i + 1 < bits.size(); ++i) differing += bits[i] != bits[i + 1];
  return differing % 2;
}

int32_t cycle_answer(const std::vector<int32_t>& moves) {
  int position = 0;  // walked step by step on the cycle 0..4
  for (const int32_t m : moves) {
    if (m == 0) position = position == 0 ? 4 : position - 1;
    if (m == 2) position = position == 4 ? 0 : position + 1;
  }
  return position;
}

// Digits 0..4 at even offsets, 5 6 7 = + − × between them: the exact integer value (products
// first, then the sum, left to right), reduced mod 5 at the end.
int32_t modular_answer(const std::vector<int32_t>& e) {
  std::vector<int64_t> terms{e[0]};
  std::vector<int32_t> signs{5};
  for (size_t i = 1; i + 1 < e.size(); i += 2) {
    if (e[i] == 7) {
      terms.back() *= e[i + 1];
    } else {
      terms.push_back(e[i + 1]);
      signs.push_back(e[i]);
    }
  }
  int64_t value = 0;
  for (size_t i = 0; i < terms.size(); ++i) value += signs[i] == 6 ? -terms[i] : terms[i];
  return static_cast<int32_t>(((value % 5) + 5) % 5);
}

}  // namespace

TEST_CASE("the regular tasks: layout, every answer against brute force, every input at length 3") {
  TokenTaskSettings s;
  s.n_symbols = 100;  // ignored: their alphabets are fixed
  struct Case {
    TaskKind task;
    int symbols;                                // content symbols
    bool (*valid_input)(int i, int32_t token);  // token i of the input is in its alphabet
    int inputs_at_3;                            // distinct inputs of length 3
    int32_t (*answer)(const std::vector<int32_t>&);
  };
  const std::vector<Case> cases = {
      {TaskKind::kEvenPairs, 2, [](int, int32_t b) { return b == 0 || b == 1; }, 8,
       even_pairs_answer},
      {TaskKind::kCycleNavigation, 5, [](int, int32_t m) { return m >= 0 && m <= 2; }, 27,
       cycle_answer},
      {TaskKind::kModularArithmetic, 8,
       [](int i, int32_t x) { return i % 2 == 0 ? x >= 0 && x <= 4 : x >= 5 && x <= 7; }, 75,
       modular_answer},
  };
  for (const Case& c : cases) {
    CAPTURE(task_name(c.task));
    const SpecialTokens sp = special_tokens(c.task, s);
    CHECK(sp.bos == c.symbols);
    for (const int length : {1, 2, 3, 6, 13, 40}) {
      CAPTURE(length);
      // modular-arithmetic: an odd number of tokens, L − 1 for an even L (as the study draws).
      const int n = c.task == TaskKind::kModularArithmetic && length % 2 == 0 ? length - 1 : length;
      const Batch b = token_eval_batch(c.task, s, nullptr, length, 2000, 5);
      const auto ro = check_common(b, c.symbols + 4);
      std::set<std::vector<int32_t>> inputs;
      std::set<int32_t> answers;
      for (int sq = 0; sq < b.n_seq(); ++sq) {
        const std::vector<int32_t> t = sequence_of(b, sq);
        REQUIRE(t.size() == static_cast<size_t>(n + 3));
        REQUIRE(token_sequence_tokens(c.task, s, length) == n + 3);
        CHECK(t[0] == sp.bos);
        CHECK(t[n + 1] == sp.sep);
        const std::vector<int32_t> input(t.begin() + 1, t.begin() + 1 + n);
        for (int i = 0; i < n; ++i) CHECK(c.valid_input(i, input[i]));
        CHECK(t[n + 2] == c.answer(input));
        CHECK(b.token.labels[ro[sq]] == t[n + 2]);
        CHECK(answer_rows(b, ro, sq) == std::vector<int>{n + 1});
        inputs.insert(input);
        answers.insert(t[n + 2]);
      }
      if (length == 3) CHECK(inputs.size() == static_cast<size_t>(c.inputs_at_3));
      // Every answer occurs once inputs are long enough (even-pairs at length 1 is always 0).
      if (n >= 3)
        CHECK(answers.size() == static_cast<size_t>(c.task == TaskKind::kEvenPairs ? 2 : 5));
    }
  }
  // The study's examples (docs/research/chomsky_study_formats.md).
  CHECK(even_pairs_answer({0, 0, 1, 1, 1, 0}) == 0);
  CHECK(cycle_answer({2, 0, 1, 0, 0}) == 3);
  CHECK(modular_answer({1, 5, 2, 7, 3}) == 2);  // 1 + 2 × 3 = 7
  CHECK(modular_answer({1, 6, 2, 7, 3}) == 0);  // 1 − 2 × 3 = −5
}

TEST_CASE("markov layout: every row predicts the next symbol") {
  TokenTaskSettings s;
  s.n_symbols = 6;
  s.markov_order = 2;
  const MarkovChain chain(6, 2, 0.5, 1);
  for (const int length : {1, 2, 3, 12}) {
    const Batch b = token_eval_batch(TaskKind::kMarkov, s, &chain, length, 10, 8);
    const auto ro = check_common(b, 10);
    for (int sq = 0; sq < b.n_seq(); ++sq) {
      const std::vector<int32_t> t = sequence_of(b, sq);
      REQUIRE(t.size() == static_cast<size_t>(length + 1));
      CHECK(t[0] == 6);
      CHECK(all_content(t, 1, t.size(), 6));
      CHECK(answer_rows(b, ro, sq) == range(0, length));
    }
  }
  // The chain is required and must match the settings.
  CHECK_THROWS_AS(token_eval_batch(TaskKind::kMarkov, s, nullptr, 4, 2, 1), std::logic_error);
  const MarkovChain other(6, 1, 0.5, 1);
  CHECK_THROWS_AS(token_eval_batch(TaskKind::kMarkov, s, &other, 4, 2, 1), std::logic_error);
}

TEST_CASE("token_answer_rows is the count every task's sequences answer at (the cost's rows)") {
  TokenTaskSettings s;
  s.n_symbols = 8;
  s.key_length = 3;
  const MarkovChain chain(8, 2, 0.5, 1);
  for (const TaskKind t : kTokenTasks)
    for (const int length : {4, 5, 8}) {
      CAPTURE(static_cast<int>(t));
      CAPTURE(length);
      const Batch b = token_eval_batch(t, s, &chain, length, 6, 3);
      const auto ro = check_common(b, token_vocab_size(t, s));
      for (int sq = 0; sq < b.n_seq(); ++sq) {
        const size_t rows = answer_rows(b, ro, sq).size();
        const auto most = static_cast<size_t>(token_answer_rows(t, s, length));
        if (answer_ends_at_end(t))
          CHECK(rows <= most);
        else
          CHECK(rows == most);
      }
    }
  CHECK_THROWS_AS(token_answer_rows(TaskKind::kSum, s, 4), std::logic_error);
}

}  // namespace lenlab
