// Tests for tasks/token_tasks: training and evaluation batches (lengths, weights, seeding),
// readout offsets, and the settings' checks. Layouts: test_token_tasks.cpp.
#include <doctest/doctest.h>

#include "tests/support/token_task_support.hpp"

namespace lenlab {
using namespace lenlab::test;

TEST_CASE("token train batches: lengths, weights, and dependence on the rng only") {
  TokenTaskSettings s;
  s.n_symbols = 16;
  s.key_length = 4;
  const MarkovChain chain(16, 2, 0.5, 1);
  for (const TaskKind task : kTokenTasks) {
    CAPTURE(task_name(task));
    Rng r1(42), r2(42), r3(43);
    const Batch a = token_train_batch(task, s, &chain, 9, 64, r1);
    const Batch b = token_train_batch(task, s, &chain, 9, 64, r2);
    const Batch c = token_train_batch(task, s, &chain, 9, 64, r3);
    CHECK(a.n_seq() == 64);
    check_common(a, token_vocab_size(task, s));
    CHECK(a.tokens == b.tokens);
    CHECK(a.token.rows == b.token.rows);
    CHECK(a.token.labels == b.token.labels);
    CHECK(a.token.weights == b.token.weights);
    CHECK(a.tokens != c.tokens);
    // Lengths: recover L from the token count.
    std::set<int> lengths;
    for (int sq = 0; sq < a.n_seq(); ++sq) {
      const int n = a.seq_len(sq);
      // The shortest length with this many tokens (modular-arithmetic: L and L − 1 alike).
      int l = 1;
      while (l < 100 && token_sequence_tokens(task, s, l) != n) ++l;
      lengths.insert(l);
    }
    const int lo = shortest_length(task, s);
    CHECK(*lengths.begin() == lo);
    CHECK(*lengths.rbegin() == 9);
    CHECK(lengths.size() ==
          static_cast<size_t>(task == TaskKind::kModularArithmetic ? 5 : 9 - lo + 1));
    // --l-train-min: its own shortest draws what the default draws; l_train: one length (the
    // same number of tokens in every sequence).
    Rng r4(42);
    CHECK(token_train_batch(task, s, &chain, 9, 64, r4, lo).tokens == a.tokens);
    Rng r5(42);
    const Batch one = token_train_batch(task, s, &chain, 9, 64, r5, 9);
    for (int sq = 0; sq < one.n_seq(); ++sq) CHECK(one.seq_len(sq) == one.seq_len(0));
    Rng r6(42);
    if (lo > 1) CHECK_THROWS_AS(token_train_batch(task, s, &chain, 9, 64, r6, lo - 1), UsageError);
    CHECK_THROWS_AS(token_train_batch(task, s, &chain, 9, 64, r6, 10), UsageError);
  }
  // Passkey with l_train below k + 1 trains at length k + 1 only.
  Rng r(1);
  const Batch p = token_train_batch(TaskKind::kPasskey, s, nullptr, 2, 8, r);
  for (int sq = 0; sq < p.n_seq(); ++sq) CHECK(p.seq_len(sq) == 5 + 2 + 4);
}

TEST_CASE("token eval batches are fixed by their arguments") {
  TokenTaskSettings s;
  s.n_symbols = 16;
  const MarkovChain chain(16, 2, 0.5, 1);
  for (const TaskKind task : kTokenTasks) {
    CAPTURE(task_name(task));
    const Batch a = token_eval_batch(task, s, &chain, 8, 30, 5);
    const Batch b = token_eval_batch(task, s, &chain, 8, 30, 5);
    const Batch other_seed = token_eval_batch(task, s, &chain, 8, 30, 6);
    const Batch longer = token_eval_batch(task, s, &chain, 9, 30, 5);
    CHECK(a.tokens == b.tokens);
    CHECK(a.token.rows == b.token.rows);
    CHECK(a.token.labels == b.token.labels);
    CHECK(a.token.weights == b.token.weights);
    CHECK(a.tokens != other_seed.tokens);
    // Another length draws another set: the first sequences' first 8 tokens already differ.
    CHECK(std::vector<int32_t>(a.tokens.begin(), a.tokens.begin() + 9) !=
          std::vector<int32_t>(longer.tokens.begin(), longer.tokens.begin() + 9));
    // The first sequences of a larger set are the smaller set.
    const Batch more = token_eval_batch(task, s, &chain, 8, 60, 5);
    CHECK(std::vector<int32_t>(more.tokens.begin(), more.tokens.begin() + a.n_tokens()) ==
          a.tokens);
  }
}

TEST_CASE("token_readout_offsets groups readouts by sequence") {
  Batch b;
  b.offsets = {0, 3, 5, 9};
  b.tokens.assign(9, 0);
  b.token.rows = {0, 1, 6, 7};
  b.token.labels = {0, 0, 0, 0};
  b.token.weights = {0.25, 0.25, 0.25, 0.25};
  CHECK(token_readout_offsets(b) == std::vector<int32_t>{0, 2, 2, 4});
  b.token.rows = {6, 1, 7, 7};
  CHECK_THROWS_AS(token_readout_offsets(b), std::logic_error);
  b.token.rows = {0, 1, 6, 9};
  CHECK_THROWS_AS(token_readout_offsets(b), std::logic_error);
}

TEST_CASE("check_token_task and check_depth name the setting and the value") {
  TokenTaskSettings s;
  auto message = [](TaskKind task, TokenTaskSettings settings, int lo, int hi) {
    return usage_message([&] { check_token_task(task, settings, lo, hi); });
  };
  for (const TaskKind task : kTokenTasks) CHECK(message(task, s, 5, 10) == "<no UsageError>");

  TokenTaskSettings bad = s;
  bad.n_symbols = 1;
  CHECK(message(TaskKind::kCopy, bad, 1, 5) == "--n-symbols (n_symbols) must be in 2..4096, got 1");
  CHECK(message(TaskKind::kParity, bad, 1, 5) == "<no UsageError>");  // parity ignores it
  bad.n_symbols = 4097;
  CHECK(message(TaskKind::kMarkov, bad, 1, 5) ==
        "--n-symbols (n_symbols) must be in 2..4096, got 4097");

  bad = s;
  bad.key_length = 0;
  CHECK(message(TaskKind::kPasskey, bad, 1, 5) == "--key-length (key_length) must be >= 1, got 0");
  CHECK(message(TaskKind::kCopy, bad, 1, 5) == "<no UsageError>");
  CHECK(message(TaskKind::kPasskey, s, 4, 10) ==
        "a passkey of 4 symbols (--key-length, key_length) needs length >= 5, got 4");

  const std::string recall = message(TaskKind::kRecall, s, 1, 17);
  CHECK(contains(recall, "--n-symbols (n_symbols) 16"));
  CHECK(contains(recall, "a vocabulary too small for the task"));
  CHECK(contains(recall, "length 17"));
  CHECK(message(TaskKind::kRecall, s, 1, 16) == "<no UsageError>");

  bad = s;
  bad.markov_order = 0;
  CHECK(message(TaskKind::kMarkov, bad, 1, 5) ==
        "--markov-order (markov_order) must be >= 1, got 0");
  CHECK(message(TaskKind::kCopy, bad, 1, 5) == "<no UsageError>");
  bad.markov_order = 5;  // 16^5 contexts
  const std::string table = message(TaskKind::kMarkov, bad, 1, 5);
  CHECK(contains(table, "--n-symbols (n_symbols) 16"));
  CHECK(contains(table, "--markov-order (markov_order) 5"));
  CHECK(contains(table, "<= 65536"));
  bad.markov_order = 4;  // 16^4 = 65536 is allowed
  CHECK(message(TaskKind::kMarkov, bad, 1, 5) == "<no UsageError>");

  bad = s;
  for (const double c : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity()}) {
    bad.markov_concentration = c;
    const std::string m = message(TaskKind::kMarkov, bad, 1, 5);
    CAPTURE(m);
    CHECK(contains(m, "--markov-concentration (markov_concentration) must be a finite number > 0"));
    CHECK(contains(m, fmt::format("got {}", c)));
  }

  // The Chomsky-hierarchy tasks: the shortest lengths they are defined at, and the modulus.
  CHECK(message(TaskKind::kSolveEquation, s, 2, 10) ==
        "task 'solve-equation' needs length >= 3 (the shortest equation is x = v), got 2");
  CHECK(message(TaskKind::kBinaryAddition, s, 2, 10) ==
        "task 'binary-addition' needs length >= 3 (two numbers of one bit and the operator "
        "between them), got 2");
  CHECK(contains(message(TaskKind::kBinaryMultiplication, s, 1, 10), "needs length >= 3"));
  CHECK(message(TaskKind::kMissingDuplicateString, s, 1, 10) ==
        "task 'missing-duplicate-string' needs length >= 2 (a string of one bit and its copy), "
        "got 1");
  CHECK(message(TaskKind::kSolveEquation, s, 3, 10) == "<no UsageError>");
  bad = s;
  bad.modulus = 1;
  CHECK(message(TaskKind::kCycleNavigation, bad, 1, 5) ==
        "--modulus (modulus) must be in 2..4096 (task 'cycle-navigation': its digits are tokens), "
        "got 1");
  bad.modulus = 4097;
  for (const TaskKind t : {TaskKind::kModularArithmetic, TaskKind::kModularArithmeticBrackets,
                           TaskKind::kSolveEquation})
    CHECK(contains(message(t, bad, 3, 5), "--modulus (modulus) must be in 2..4096"));
  CHECK(message(TaskKind::kEvenPairs, bad, 1, 5) == "<no UsageError>");  // no modulus there
  CHECK(usage_message([&] { token_vocab_size(TaskKind::kSolveEquation, bad); }) !=
        "<no UsageError>");
  bad = s;
  bad.n_symbols = 1;
  for (const TaskKind t : {TaskKind::kDuplicateString, TaskKind::kOddsFirst, TaskKind::kBucketSort})
    CHECK(message(t, bad, 1, 5) == "--n-symbols (n_symbols) must be in 2..4096, got 1");
  CHECK(message(TaskKind::kStackManipulation, bad, 1, 5) == "<no UsageError>");

  CHECK(message(TaskKind::kCopy, s, 0, 5) == "lengths must be >= 1, got 0");
  CHECK(message(TaskKind::kCopy, s, 6, 5) == "empty length range 6..5");

  CHECK(usage_message([] { check_depth(1.5); }) == "--depths: a depth must be in [0, 1], got 1.5");
  CHECK(usage_message([] { check_depth(-0.25); }) ==
        "--depths: a depth must be in [0, 1], got -0.25");
  CHECK(contains(usage_message([] { check_depth(std::nan("")); }),
                 "--depths: a depth must be in [0, 1]"));
  CHECK(usage_message([] { check_depth(0.0); }) == "<no UsageError>");
  CHECK(usage_message([] { check_depth(1.0); }) == "<no UsageError>");

  // The batch functions check too.
  CHECK(contains(usage_message([&] { token_eval_batch(TaskKind::kPasskey, s, nullptr, 3, 2, 1); }),
                 "needs length >= 5, got 3"));
  CHECK(usage_message([&] { token_eval_batch(TaskKind::kPasskey, s, nullptr, 8, 2, 1, 2.0); }) ==
        "--depths: a depth must be in [0, 1], got 2");
  CHECK(contains(usage_message([&] {
                   Rng rng(1);
                   token_train_batch(TaskKind::kRecall, s, nullptr, 20, 2, rng);
                 }),
                 "a vocabulary too small"));
  CHECK(usage_message([&] { token_eval_batch(TaskKind::kCopy, s, nullptr, 3, 0, 1); }) ==
        "evaluation samples must be >= 1 (got 0)");
}

}  // namespace lenlab
