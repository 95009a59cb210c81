// Attention diagnostics (train/attention_stats.hpp): the accumulator against hand values, and the
// whole path (attention_infer's row statistics → the model → evaluate → attention.csv) on a model
// whose attention is uniform, where every row's entropy is log(keys it sees) exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/small_model.hpp"
#include "train/attention_stats.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;

TEST_CASE("attention statistics: per-sequence row means, weighted over sequences") {
  Batch b;
  append_tokens(b, {0, 1, 2});  // rows 0..2
  append_tokens(b, {0, 1});     // rows 3..4
  AttentionStatsAccumulator acc(1, 2);
  // [Q = 5 rows, 2 heads, (entropy, max)]; row 4 is padding (−1) and must not count.
  const std::vector<double> st = {1,  0.5, 2,  0.4,  //
                                  3,  0.3, 4,  0.2,  //
                                  5,  0.1, 6,  0.0,  //
                                  7,  0.9, 8,  0.8,  //
                                  99, 99,  99, 99};
  acc.add(0, st.data(), {0, 1, 2, 3, -1}, b, {0.25, 0.75});
  const AttentionStats a = acc.finish();
  REQUIRE(a.entropy.size() == 2);
  // Sequence 0: rows 0..2, means (3, 0.3) and (4, 0.2); sequence 1: row 3 only.
  CHECK(a.entropy[0] == doctest::Approx(0.25 * 3 + 0.75 * 7));
  CHECK(a.max_prob[0] == doctest::Approx(0.25 * 0.3 + 0.75 * 0.9));
  CHECK(a.entropy[1] == doctest::Approx(0.25 * 4 + 0.75 * 8));
  CHECK(a.max_prob[1] == doctest::Approx(0.25 * 0.2 + 0.75 * 0.8));
  CHECK(AttentionStatsAccumulator(2, 2).finish().empty());
}

TEST_CASE(
    "attention statistics: with uniform attention every row's entropy is log of the keys it sees, "
    "with and without a window") {
  for (const char* pe : {"nope", "rope"}) {
    CAPTURE(pe);
    TrainSpec spec;
    spec.task = "length";
    spec.pe = pe;
    spec.l_train = 4;
    spec.l_test = 9;
    spec.eval_samples = 8;
    spec.d_model = 8;
    spec.n_head = 2;
    spec.d_ff = 16;
    const ResolvedSpec resolved = resolve(spec);
    Transformer<float> model(resolved.model);
    model.init(1);
    // q = k = v = 0 at every layer: every logit is 0, so attention is uniform over the keys seen.
    zero_qkv(model);
    for (const int window : {0, 3}) {
      CAPTURE(window);
      EvalJob job = eval_job(resolved, spec);
      job.attention_stats = true;
      job.attention.window.n_local = window;
      const std::vector<LengthResult> results = evaluate(model, {job})[0];
      REQUIRE(results.size() == 9);
      for (const LengthResult& r : results) {
        CAPTURE(r.length);
        const int tokens = r.length + 2;  // BOS, the bits, EOS
        const auto keys = [&](int i) { return window > 0 ? std::min(i + 1, window) : i + 1; };
        double entropy = 0, max_prob = 0;  // layer 0: the mean over every row
        for (int i = 0; i < tokens; ++i) {
          entropy += std::log(keys(i)) / tokens;
          max_prob += 1.0 / keys(i) / tokens;
        }
        const AttentionStats& a = r.attention;
        REQUIRE(a.entropy.size() == 4);  // 2 layers × 2 heads
        for (int h = 0; h < 2; ++h) {
          CHECK(a.entropy[h] == doctest::Approx(entropy).epsilon(1e-5));
          CHECK(a.max_prob[h] == doctest::Approx(max_prob).epsilon(1e-5));
          // The last layer computes the EOS row only, the one the head reads.
          CHECK(a.entropy[2 + h] == doctest::Approx(std::log(keys(tokens - 1))).epsilon(1e-5));
          CHECK(a.max_prob[2 + h] == doctest::Approx(1.0 / keys(tokens - 1)).epsilon(1e-5));
        }
      }
    }
  }
}

TEST_CASE("lenlab eval --attention-stats writes attention.csv and leaves results.csv as it was") {
  const fs::path base = run_dir("attention-stats");
  std::vector<std::string> args = tiny_args(base / "run");
  args.insert(args.end(), {"--pe", "alibi"});
  REQUIRE(run_cli(args).rc == 0);
  const CliResult plain =
      run_cli({"eval", (base / "run").string(), "--out", (base / "a").string()});
  const CliResult with = run_cli(
      {"eval", (base / "run").string(), "--out", (base / "b").string(), "--attention-stats"});
  REQUIRE_MESSAGE(plain.rc == 0, plain.err);
  REQUIRE_MESSAGE(with.rc == 0, with.err);
  CHECK(read_text(base / "a" / "results.csv") == read_text(base / "b" / "results.csv"));
  CHECK_FALSE(fs::exists(base / "a" / "attention.csv"));
  const auto rows = read_csv(base / "b" / "attention.csv");
  REQUIRE(rows.size() == static_cast<size_t>(kTinyLTest) * 2 * 2);  // lengths × layers × heads
  for (const auto& row : rows) {
    const double l = std::stod(row.at("length")), e = std::stod(row.at("entropy"));
    const double m = std::stod(row.at("max_prob"));
    CHECK(row.at("depth").empty());
    CHECK(e >= -1e-6);
    CHECK(e <= std::log(l + 2) + 1e-5);  // at most uniform over a sequence's l + 2 tokens
    CHECK(m >= 1.0 / (l + 2) - 1e-6);
    CHECK(m <= 1.0 + 1e-6);
  }
}
