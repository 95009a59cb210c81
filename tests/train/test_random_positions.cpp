// Randomized positions (train/random_positions.hpp): sorted uniform subsets, the full range as
// the plain positions, fixed test positions, and the settings it refuses.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/positional_encodings.hpp"
#include "tasks/task.hpp"
#include "train/evaluate.hpp"
#include "train/random_positions.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

TEST_CASE("randomized positions: sorted, in range, every subset equally likely") {
  Rng rng(11);
  Batch b = sample_train_batch(TaskKind::kLength, 10, 64, rng);
  const Batch plain = b;
  randomize_positions(b, 40, rng);
  CHECK(b.tokens == plain.tokens);
  for (int s = 0; s < b.n_seq(); ++s)
    for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t) {
      CHECK(b.positions[t] >= 0);
      CHECK(b.positions[t] < 40);
      if (t > b.offsets[s]) CHECK(b.positions[t] > b.positions[t - 1]);
    }
  // Two tokens in 4 positions: the 6 subsets, each 1/6 of 60000 draws (σ ≈ 91).
  std::map<std::pair<int, int>, int> seen;
  Batch two;
  append_sequence(two, {kBos, kEos}, 0.0);
  for (int i = 0; i < 60000; ++i) {
    randomize_positions(two, 4, rng);
    ++seen[{two.positions[0], two.positions[1]}];
  }
  REQUIRE(seen.size() == 6);
  for (const auto& [subset, n] : seen) CHECK(std::abs(n - 10000) < 500);
  // A sequence as long as the range keeps 0..N−1: the plain positions.
  Batch full;
  append_sequence(full, {kBos, 1, 0, 1, kEos}, 3.0);
  randomize_positions(full, 5, rng);
  CHECK(full.positions == std::vector<int32_t>{0, 1, 2, 3, 4});
  CHECK_THROWS_AS(randomize_positions(full, 4, rng), std::invalid_argument);
}

TEST_CASE("randomized positions: fixed test positions, and the plain run where the range is full") {
  TrainSpec spec;
  spec.pe = "rope";
  spec.l_train = 4;
  spec.l_test = 8;
  spec.random_positions = 10;  // length 8 has 10 tokens: its positions are 0..9
  spec.eval_samples = 40;
  const ResolvedSpec r = resolve(spec);
  CHECK(r.model.max_positions == 10);
  Transformer<float> model(r.model);
  model.init(3);
  const auto a = evaluate(model, {eval_job(r, spec)})[0];
  const auto again = evaluate(model, {eval_job(r, spec)})[0];
  TrainSpec plain_spec = spec;
  plain_spec.random_positions = 0;
  const ResolvedSpec plain_r = resolve(plain_spec);
  const auto plain = evaluate(model, {eval_job(plain_r, plain_spec)})[0];
  REQUIRE(a.size() == 8);
  bool some_differ = false;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].mse == again[i].mse);  // the same test positions every time
    some_differ = some_differ || a[i].mse != plain[i].mse;
  }
  CHECK(some_differ);               // shorter lengths see other positions
  CHECK(a[7].mse == plain[7].mse);  // length 8 fills the range: the plain positions
}

TEST_CASE("randomized positions: settings without a meaning are refused, naming the flag") {
  const TokenTaskSettings t;
  auto refused = [&](int n, const char* pe, const char* word) {
    CHECK_THROWS_WITH_AS(check_random_positions(n, pe, TaskKind::kLength, t, 10, 50),
                         doctest::Contains(word), UsageError);
  };
  refused(-1, "rope", "must be >= 0");
  refused(64, "nope", "--pe nope reads no positions");
  refused(51, "alibi", "at least 52");
  // Every encoding that reads positions takes them (Ruoss et al. randomize every encoding they
  // compare); only one that reads none is refused.
  for (const PositionalEncodingInfo& info : positional_encodings()) {
    const std::string name = info.name;
    CAPTURE(name);
    if (info.pe == PositionalEncoding::kNope)
      refused(64, name.c_str(), "reads no positions");
    else
      CHECK_NOTHROW(check_random_positions(52, name, TaskKind::kLength, t, 10, 50));
  }
  CHECK_NOTHROW(check_random_positions(0, "nope", TaskKind::kLength, t, 10, 50));
  TrainSpec spec;
  spec.pe = "alibi";
  spec.random_positions = 200;
  CHECK(to_json(spec).at("random_positions") == 200);
  CHECK_FALSE(to_json(TrainSpec{}).contains("random_positions"));
}
