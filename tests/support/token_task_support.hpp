#pragma once
// Helpers of the token-task suites (test_token_tasks.cpp, test_token_batches.cpp): what every token
// batch must satisfy, and small views of a batch.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "tasks/markov.hpp"
#include "tasks/token_tasks.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab::test {

inline const std::vector<TaskKind> kTokenTasks = {TaskKind::kPasskey,
                                                  TaskKind::kRecall,
                                                  TaskKind::kCopy,
                                                  TaskKind::kReverse,
                                                  TaskKind::kParity,
                                                  TaskKind::kMarkov,
                                                  TaskKind::kEvenPairs,
                                                  TaskKind::kCycleNavigation,
                                                  TaskKind::kModularArithmetic,
                                                  TaskKind::kStackManipulation,
                                                  TaskKind::kModularArithmeticBrackets,
                                                  TaskKind::kSolveEquation,
                                                  TaskKind::kDuplicateString,
                                                  TaskKind::kMissingDuplicateString,
                                                  TaskKind::kOddsFirst,
                                                  TaskKind::kBinaryAddition,
                                                  TaskKind::kBinaryMultiplication,
                                                  TaskKind::kComputeSqrt,
                                                  TaskKind::kBucketSort};

// The tasks whose answer ends at an END token, so that sequences of one length answer at different
// numbers of rows (token_answer_rows is their most).
inline bool answer_ends_at_end(TaskKind t) {
  return t == TaskKind::kStackManipulation || t == TaskKind::kBinaryAddition ||
         t == TaskKind::kBinaryMultiplication;
}

inline std::vector<int32_t> sequence_of(const Batch& b, int s) {
  return {b.tokens.begin() + b.offsets[s], b.tokens.begin() + b.offsets[s + 1]};
}

// What every token batch must satisfy: packing, positions, labels = next token of the same
// sequence, no scalar readout, weights 1/S per sequence spread equally over its rows. Returns the
// readout offsets per sequence.
inline std::vector<int32_t> check_common(const Batch& b, int vocab) {
  REQUIRE(b.n_seq() >= 1);
  CHECK(b.offsets.front() == 0);
  CHECK(b.offsets.back() == b.n_tokens());
  CHECK(b.positions.size() == b.tokens.size());
  CHECK(b.read_rows.empty());
  CHECK(b.targets.empty());
  CHECK(b.weights.empty());
  CHECK(b.token.labels.size() == b.token.rows.size());
  CHECK(b.token.weights.size() == b.token.rows.size());
  for (int s = 0; s < b.n_seq(); ++s)
    for (int i = b.offsets[s]; i < b.offsets[s + 1]; ++i) {
      CHECK(b.positions[i] == i - b.offsets[s]);
      CHECK(b.tokens[i] >= 0);
      CHECK(b.tokens[i] < vocab);
    }
  const std::vector<int32_t> ro = token_readout_offsets(b);
  REQUIRE(ro.size() == static_cast<size_t>(b.n_seq()) + 1);
  double total = 0.0;
  for (int s = 0; s < b.n_seq(); ++s) {
    REQUIRE(ro[s + 1] > ro[s]);
    double seq_total = 0.0;
    for (int r = ro[s]; r < ro[s + 1]; ++r) {
      const int row = b.token.rows[r];
      CHECK(row >= b.offsets[s]);
      CHECK(row + 1 < b.offsets[s + 1]);  // the predicted token is in the same sequence
      CHECK(b.token.labels[r] == b.tokens[row + 1]);
      CHECK(b.token.weights[r] == b.token.weights[ro[s]]);
      seq_total += b.token.weights[r];
    }
    CHECK(seq_total == doctest::Approx(1.0 / b.n_seq()).epsilon(1e-12));
    total += seq_total;
  }
  CHECK(std::fabs(total - 1.0) < 1e-12);
  return ro;
}

// Readout rows of sequence s, relative to its start.
inline std::vector<int> answer_rows(const Batch& b, const std::vector<int32_t>& ro, int s) {
  std::vector<int> rows;
  for (int r = ro[s]; r < ro[s + 1]; ++r) rows.push_back(b.token.rows[r] - b.offsets[s]);
  return rows;
}

inline std::vector<int> range(int first, int count) {
  std::vector<int> v(count);
  for (int i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

inline bool all_content(const std::vector<int32_t>& t, size_t begin, size_t end, int n) {
  for (size_t i = begin; i < end; ++i)
    if (t[i] < 0 || t[i] >= n) return false;
  return true;
}

}  // namespace lenlab::test
