// T5's buckets that no training step reaches (train/untrained_bias.hpp): the share of test pairs
// that read them, the cap that maps them onto the largest trained distance, and their file. Whole
// runs: tests/train/test_untrained_bias_runs.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "results/length_files.hpp"
#include "train/inference_attention.hpp"
#include "train/run_settings.hpp"
#include "train/untrained_bias.hpp"

using namespace lenlab;

namespace {

// One sequence of `n` tokens at positions 0..n−1 whose last row is the scalar head's.
Batch one_sequence(int n) {
  Batch b;
  b.offsets = {0, n};
  for (int i = 0; i < n; ++i) {
    b.tokens.push_back(i == 0 ? kBos : kOne);
    b.positions.push_back(i);
  }
  b.read_rows = {n - 1};
  b.targets = {0.0};
  return b;
}

}  // namespace

TEST_CASE("untrained bias: the pairs counted equal a count by hand, with windows and caps") {
  // Distances 3 and up untrained (D = 9).
  std::vector<uint8_t> untrained(10, 0);
  for (int d = 3; d <= 9; ++d) untrained[d] = 1;
  const Batch b = one_sequence(8);  // the read row 7 sees keys 0..7: distances 7..0
  ops::AttentionWindow plain;
  CHECK(untrained_pair_fraction(b, plain, untrained) == doctest::Approx(5.0 / 8.0));
  // A cap of 2: every distance is a trained one.
  ops::AttentionWindow capped;
  capped.max_distance = 2;
  CHECK(untrained_pair_fraction(b, capped, untrained) == 0.0);
  // A Λ-mask of 1 global key and 3 local ones: keys 0, 5, 6, 7 (distances 7, 2, 1, 0).
  ops::AttentionWindow lambda;
  lambda.n_global = 1;
  lambda.n_local = 3;
  CHECK(untrained_pair_fraction(b, lambda, untrained) == doctest::Approx(1.0 / 4.0));
  // Token rows count where they carry a label; positions, not rows, set the distance (a distance
  // past D counts as D's).
  Batch t = one_sequence(4);
  t.read_rows.clear();
  t.targets.clear();
  t.positions = {0, 20, 21, 22};
  t.token.rows = {2, 3};
  t.token.labels = {-1, kOne};
  t.token.weights = {1.0, 1.0};
  CHECK(untrained_pair_fraction(t, plain, untrained) == doctest::Approx(1.0 / 4.0));
  CHECK(std::isnan(untrained_pair_fraction(b, plain, {})));
}

TEST_CASE("untrained bias: the trained cap is the distance before the first untrained one") {
  CHECK(trained_distance_cap({0, 0, 0, 0}) == 0);  // none untrained: no cap
  CHECK(trained_distance_cap({0, 0, 0, 1, 1}) == 2);
  CHECK(trained_distance_cap({0, 0, 0, 1, 0}) == 2);
  CHECK_THROWS_WITH_AS(trained_distance_cap({0, 1, 1}), doctest::Contains("distance 1 was never"),
                       UsageError);
}

TEST_CASE("--distance-cap trained is refused where no distance can be untrained") {
  TrainSpec spec;
  spec.task = "length";
  spec.l_train = 10;
  TestTimeAttention t;
  t.distance_cap = "trained";
  CHECK(test_time_attention(t, spec, PositionalEncoding::kT5).window.max_distance == 11);
  for (const PositionalEncoding pe :
       {PositionalEncoding::kAlibi, PositionalEncoding::kRope, PositionalEncoding::kKerple}) {
    CAPTURE(positional_encoding_name(pe));
    CHECK_THROWS_WITH_AS(test_time_attention(t, spec, pe),
                         doctest::Contains("share their parameters"), UsageError);
  }
  t.distance_cap = "trainedd";
  CHECK_THROWS_WITH_AS(test_time_attention(t, spec, PositionalEncoding::kT5),
                       doctest::Contains("'trained' (the largest distance whose learned bias"),
                       UsageError);
}

TEST_CASE("untrained_bias.csv reads back, and refuses what is not a share") {
  std::vector<LengthResult> rows(2);
  rows[0].length = 4;
  rows[0].untrained_pairs = 0;
  rows[1].length = 8;
  rows[1].untrained_pairs = 0.4;
  const std::string text = untrained_bias_csv_text(rows);
  CHECK(text == "length,depth,untrained_pairs\n4,,0\n8,,0.4\n");
  std::vector<LengthResult> back(2);
  back[0].length = 4;
  back[1].length = 8;
  add_untrained_bias_csv(text, "u.csv", back);
  CHECK(back[1].untrained_pairs == 0.4);
  std::vector<LengthResult> again = back;
  CHECK_THROWS_WITH_AS(
      add_untrained_bias_csv("length,depth,untrained_pairs\n8,,1.5\n", "u.csv", again),
      doctest::Contains("not a fraction"), UsageError);
  CHECK_THROWS_WITH_AS(add_untrained_bias_csv(text, "u.csv", again),
                       doctest::Contains("a second time"), UsageError);
}
