// Virtual-context learning (train/vcl.hpp): the re-weighted answer rows against a brute-force
// loss, offset 0 as the plain loss, the mixture, and the settings it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/ops/prefix_noise.hpp"
#include "tasks/token_tasks.hpp"
#include "train/run_settings.hpp"
#include "train/vcl.hpp"

using namespace lenlab;

namespace {

Batch markov_batch(uint64_t seed, const MarkovChain& chain, const TokenTaskSettings& t) {
  Rng rng(seed);
  return token_train_batch(TaskKind::kMarkov, t, &chain, 12, 16, rng);
}

// Σ_r weight_r · loss_r with a made-up per-row loss (its answer row's index + 1).
double weighted(const Batch& b) {
  double sum = 0;
  for (int r = 0; r < b.token.size(); ++r) sum += b.token.weights[r] * (r + 1);
  return sum;
}

}  // namespace

TEST_CASE("VCL: offset 0 is the plain loss, and the loss is the mean over the counted tokens") {
  const TokenTaskSettings t;
  const MarkovChain chain(t.n_symbols, t.markov_order, t.markov_concentration, t.markov_seed);
  const Batch plain = markov_batch(5, chain, t);
  Rng rng(1);

  Batch same = plain;
  apply_vcl(same, {0, 0.0}, rng);
  CHECK(same.token.weights == plain.token.weights);
  CHECK(same.detached.empty());
  CHECK(same.prefix_noise.empty());

  for (int offset : {1, 3, 8, 11}) {
    Batch b = plain;
    apply_vcl(b, {offset, 0.0}, rng);
    // Brute force: per sequence the mean of the rows predicting a token after the offset, then
    // the mean over the sequences that have one.
    double total = 0;
    int sequences = 0;
    const std::vector<int32_t> first = token_readout_offsets(plain);
    for (int s = 0; s < plain.n_seq(); ++s) {
      double seq_sum = 0;
      int n = 0;
      for (int r = first[s]; r < first[s + 1]; ++r) {
        const int token = plain.token.rows[r] - plain.offsets[s] + 1;  // the token it predicts
        if (token <= offset) {
          CHECK(b.token.weights[r] == 0.0);
          continue;
        }
        seq_sum += r + 1;
        ++n;
      }
      if (n > 0) total += seq_sum / n, ++sequences;
    }
    REQUIRE(sequences > 0);
    CHECK(weighted(b) == doctest::Approx(total / sequences).epsilon(1e-12));
    double w = 0;
    for (double x : b.token.weights) w += x;
    CHECK(w == doctest::Approx(1.0).epsilon(1e-12));

    // The mixture is α·plain + (1 − α)·VCL, row by row.
    Batch mixed = plain;
    apply_vcl(mixed, {offset, 0.25}, rng);
    for (int r = 0; r < plain.token.size(); ++r)
      CHECK(mixed.token.weights[r] ==
            doctest::Approx(0.25 * plain.token.weights[r] + 0.75 * b.token.weights[r]));
  }
}

TEST_CASE("VCL: settings without a meaning are refused, naming the flag") {
  const TokenTaskSettings t;
  auto refused = [&](VclSettings v, TaskKind task, const char* word) {
    CHECK_THROWS_WITH_AS(check_vcl(v, task, t, 10), doctest::Contains(word), UsageError);
  };
  refused({-1, 0.0}, TaskKind::kMarkov, "--vcl-offset");
  refused({2, 1.5}, TaskKind::kMarkov, "--vcl-alpha");
  refused({0, 0.5}, TaskKind::kMarkov, "no effect without --vcl-offset");
  refused({2, 0.0}, TaskKind::kLength, "one output per sequence");
  refused({10, 0.0}, TaskKind::kMarkov, "leaves no token with loss");
  refused({0, 0.0, "detach"}, TaskKind::kMarkov, "--vcl-prefix detach needs --vcl-offset");
  refused({0, 0.0, "random"}, TaskKind::kLength, "--vcl-prefix random: task 'length'");
  refused({2, 0.0, "random"}, TaskKind::kSum, "applies to the token tasks");
  refused({2, 0.0, "drop"}, TaskKind::kMarkov, "'drop' is not a prefix kind; choose 'mask'");
  CHECK_NOTHROW(check_vcl({3, 0.5, "random"}, TaskKind::kMarkov, t, 10));
  CHECK_NOTHROW(check_vcl({3, 0.0, "detach"}, TaskKind::kCopy, t, 10));
  CHECK_NOTHROW(check_vcl({9, 0.0}, TaskKind::kMarkov, t, 10));   // tokens up to 10: 10 counts
  CHECK_NOTHROW(check_vcl({10, 1.0}, TaskKind::kMarkov, t, 10));  // α = 1: the plain loss
  CHECK_NOTHROW(check_vcl({}, TaskKind::kLength, t, 10));
  // Through a spec, and left out of run ids at the defaults.
  TrainSpec spec;
  spec.task = "copy";
  spec.vcl = {4, 0.5};
  CHECK_NOTHROW(resolve(spec));
  CHECK(to_json(spec).at("vcl_offset") == 4);
  CHECK_FALSE(to_json(TrainSpec{}).contains("vcl_offset"));
  CHECK_FALSE(to_json(spec).contains("vcl_prefix"));  // mask, the default: earlier ids stay
  spec.vcl.prefix = "detach";
  CHECK(to_json(spec).at("vcl_prefix") == "detach");
}

TEST_CASE("VCL's prefix kinds mark rows 0 .. offset − 1: detach all of them, random all but BOS") {
  const TokenTaskSettings t;
  const MarkovChain chain(t.n_symbols, t.markov_order, t.markov_concentration, t.markov_seed);
  const Batch plain = markov_batch(5, chain, t);
  const int offset = 6;
  Rng rng(1);
  Batch mask = plain, detach = plain, random = plain;
  apply_vcl(mask, {offset, 0.0}, rng);
  apply_vcl(detach, {offset, 0.0, "detach"}, rng);
  apply_vcl(random, {offset, 0.0, "random"}, rng);
  // The loss weights are mask's in every kind.
  CHECK(detach.token.weights == mask.token.weights);
  CHECK(random.token.weights == mask.token.weights);
  CHECK(mask.detached.empty());
  CHECK(mask.prefix_noise.empty());
  REQUIRE(detach.detached.size() == plain.tokens.size());
  REQUIRE(random.prefix_noise.size() == plain.tokens.size());
  CHECK(detach.prefix_noise.empty());
  int short_sequences = 0;
  for (int s = 0; s < plain.n_seq(); ++s) {
    const int first = plain.offsets[s], L = plain.seq_len(s);
    short_sequences += L <= offset;
    for (int i = 0; i < L; ++i) {
      CHECK(detach.detached[first + i] == (i < offset ? 1 : 0));
      const int want = L <= offset  ? ops::kPassRow
                       : i == 0     ? ops::kPassRow
                       : i < offset ? ops::kNoiseRow
                                    : ops::kStatsRow;
      CHECK(random.prefix_noise[first + i] == want);
    }
  }
  CHECK(short_sequences > 0);  // lengths up to 12: some keep every token
  // Random's draws come from the data stream: another batch, other draws.
  Batch again = plain;
  apply_vcl(again, {offset, 0.0, "random"}, rng);
  CHECK(again.noise_seed != random.noise_seed);
}
