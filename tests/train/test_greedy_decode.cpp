// Scores on what the model writes (train/greedy_decode.hpp): evaluate()'s greedy scores against a
// brute force that re-runs the full forward on the sequence written so far for every answer row,
// for tasks with fixed answers, answers ending at END and passkey, with a Λ-mask and with random
// positions, in chunks; and the settings that cannot decode refused by name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "tests/support/test_support.hpp"
#include "tests/train/token_eval_support.hpp"
#include "train/evaluate_impl.hpp"
#include "train/inference_attention.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// Greedy decoding the slow way: per answer row, the full inference forward of the sequence as
// written so far (the rows after it, not yet written, are the set's: causal attention never reads
// them), its argmax written into the next row.
std::vector<char> brute_force_greedy(Transformer<float>& model, const Batch& set,
                                     const AttentionSpec& attention) {
  const int V = model.config().vocab_size;
  const std::vector<int32_t> readout = token_readout_offsets(set);
  std::vector<char> correct(set.token.size(), 0);
  for (int s = 0; s < set.n_seq(); ++s) {
    Batch one = slice_batch(set, s, s + 1);
    for (int a = 0; a < one.token.size(); ++a) {
      Batch read = one;
      read.token.rows = {one.token.rows[a]};
      read.token.labels = {one.token.labels[a]};
      read.token.weights = {1.0};
      PackedBatch<CpuBackend<float>> packed;
      packed.pack({&read}, model.config(), {&attention});
      model.infer(packed);
      const std::vector<float> z = model.download_token_logits(packed);
      int best = 0;
      for (int v = 1; v < V; ++v)
        if (z[v] > z[best]) best = v;
      correct[readout[s] + a] = best == one.token.labels[a];
      one.tokens[one.token.rows[a] + 1] = best;  // the model's own token from here on
    }
  }
  return correct;
}

}  // namespace

TEST_CASE("greedy scores equal a brute-force decoding with the full forward, in chunks") {
  TokenTaskSettings settings;
  settings.n_symbols = 3;  // few symbols: an untrained model gets some answers right
  settings.key_length = 2;
  struct Case {
    TaskKind task;
    int length;
    double depth;
    const char* variant;
  };
  for (const Case& c :
       {Case{TaskKind::kCopy, 5, kNoDepth, "plain"},
        Case{TaskKind::kReverse, 4, kNoDepth, "lambda-mask"},
        Case{TaskKind::kPasskey, 6, 0.5, "plain"}, Case{TaskKind::kRecall, 3, kNoDepth, "plain"},
        Case{TaskKind::kStackManipulation, 6, kNoDepth, "random positions"},
        Case{TaskKind::kBinaryAddition, 5, kNoDepth, "lambda-mask"}}) {
    CAPTURE(task_name(c.task));
    CAPTURE(std::string(c.variant));
    ModelConfig config = token_model(c.task, settings, 64);
    config.pe = PositionalEncoding::kRope;
    Transformer<float> model(config);
    model.init(4);
    EvalJob job;
    job.task = c.task;
    job.lengths = {c.length};
    job.depths = c.depth == kNoDepth ? std::vector<double>{} : std::vector<double>{c.depth};
    job.eval_samples = 9;
    job.eval_seed = 5;
    job.token_settings = &settings;
    job.greedy = true;
    if (std::string(c.variant) == "lambda-mask") job.attention.window = {1, 3, 0};
    if (std::string(c.variant) == "random positions") job.random_positions = 40;
    // 40 rows per forward: the 9 sequences decode in several chunks.
    const std::vector<LengthResult> got = evaluate(model, {job}, {}, 40)[0];
    REQUIRE(got.size() == 1);
    const Batch set = job_eval_set(job, c.length, c.depth);
    const std::vector<char> want = brute_force_greedy(model, set, job.attention);
    LengthResult expect;
    add_generated_scores(expect, set, want);
    CHECK(got[0].generated_token_accuracy == expect.generated_token_accuracy);
    CHECK(got[0].generated_exact_match == expect.generated_exact_match);
    // Not a check that passes on nothing: some answers right, some wrong.
    CHECK(expect.generated_token_accuracy > 0);
    CHECK(expect.generated_token_accuracy < 1);
    // The teacher-forced scores are those of a job without greedy decoding.
    job.greedy = false;
    const LengthResult plain = evaluate(model, {job}, {}, 40)[0][0];
    CHECK(got[0].token_accuracy == plain.token_accuracy);
    CHECK(got[0].exact_match == plain.exact_match);
    CHECK(got[0].cross_entropy == plain.cross_entropy);
    CHECK(std::isnan(plain.generated_token_accuracy));
  }
}

TEST_CASE("greedy decoding is refused where there is no answer to write, and unknown modes") {
  TrainSpec spec;
  TestTimeAttention t;
  t.decode = "greedy";
  for (const char* task : {"markov", "text", "length"}) {
    spec.task = task;
    CHECK(contains(usage_message([&] { test_time_attention(t, spec, PositionalEncoding::kRope); }),
                   "leave --decode out"));
  }
  spec.task = "copy";
  CHECK_NOTHROW(test_time_attention(t, spec, PositionalEncoding::kRope));
  t.decode = "beam";
  CHECK(contains(usage_message([&] { test_time_attention(t, spec, PositionalEncoding::kRope); }),
                 "got 'beam'"));
}

TEST_CASE("results.csv carries the generated columns when decoded, and reads them back") {
  LengthResult a;
  a.token = true;
  a.length = 3;
  a.token_accuracy = 0.75;
  a.exact_match = 0.5;
  a.cross_entropy = 0.25;
  a.n_sequences = 4;
  a.n_answer_tokens = 12;
  CHECK(results_csv_text({a}).find("generated") == std::string::npos);
  a.generated_token_accuracy = 0.625;
  a.generated_exact_match = 0.5;
  const std::string text = results_csv_text({a});
  CHECK(contains(text, ",generated_token_accuracy,generated_exact_match\n"));
  CHECK(contains(text, "\n3,,0.75,0.5,0.25,nan,4,12,nan,0.625,0.5\n"));
  const std::vector<LengthResult> back = parse_results_csv(text, "r.csv");
  REQUIRE(back.size() == 1);
  CHECK(back[0].generated_token_accuracy == 0.625);
  CHECK(back[0].generated_exact_match == 0.5);
}
