// Generation (train/generate.hpp, train/token_sampler.hpp, tasks/token_text.hpp): greedy writing
// from the cache against a brute force that re-runs the full forward on everything written so
// far; the sampler's draws against their distributions (temperature, top-k, top-p); prompts read
// and tokens printed for a token task and a text run, bad input refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "tasks/token_text.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/test_support.hpp"
#include "train/generate.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// The next token the slow way: the full inference forward of `tokens`, the last row's argmax.
int full_forward_argmax(Transformer<float>& model, const std::vector<int>& tokens,
                        const AttentionSpec& attention) {
  Batch b;
  append_tokens(b, tokens);
  b.token.rows = {b.n_tokens() - 1};
  b.token.labels = {0};
  b.token.weights = {1.0};
  PackedBatch<CpuBackend<float>> packed;
  packed.pack({&b}, model.config(), {&attention});
  model.infer(packed);
  const std::vector<float> z = model.download_token_logits(packed);
  return static_cast<int>(std::max_element(z.begin(), z.end()) - z.begin());
}

}  // namespace

TEST_CASE("greedy generation writes what the full forward's argmax writes, token by token") {
  for (PositionalEncoding pe : {PositionalEncoding::kRope, PositionalEncoding::kAlibi,
                                PositionalEncoding::kLearned, PositionalEncoding::kNope}) {
    for (int variant = 0; variant < 2; ++variant) {
      CAPTURE(positional_encoding_name(pe));
      CAPTURE(variant);
      ModelConfig c = small_config(pe);
      c.token_head = true;
      c.vocab_size = 5;
      c.max_positions = 32;
      Transformer<float> model(c);
      model.init(8);
      GenerateJob job;
      job.prompt = {4, 1, 2, 0};
      job.tokens = 20;
      if (variant == 1) job.attention.window = {1, 4, 0};  // a Λ-mask
      std::vector<int> seen;
      const std::vector<int> written =
          generate(model, job, [&](int token) { seen.push_back(token); });
      CHECK(seen == written);
      REQUIRE(written.size() == 20);
      std::vector<int> sequence = job.prompt;
      for (int i = 0; i < job.tokens; ++i) {
        const int want = full_forward_argmax(model, sequence, job.attention);
        CHECK(written[i] == want);
        sequence.push_back(want);
      }
    }
  }
}

TEST_CASE("sampling draws from the softmax at its temperature, within top-k and top-p") {
  const std::vector<double> logits = {std::log(0.5), std::log(0.3), std::log(0.2)};
  const auto frequencies = [&](const Sampling& s) {
    Rng rng(21);
    std::vector<double> f(3, 0.0);
    const int n = 40000;
    for (int i = 0; i < n; ++i) f[sample_token(logits.data(), 3, s, rng)] += 1.0;
    for (double& x : f) x /= n;
    return f;
  };
  // Binomial standard deviations are below 0.0025 at 40000 draws: 0.01 is four of them.
  const std::vector<double> plain = frequencies({1.0, 0, 1.0});
  CHECK(plain[0] == doctest::Approx(0.5).epsilon(0.02));
  CHECK(plain[1] == doctest::Approx(0.3).epsilon(0.035));
  CHECK(plain[2] == doctest::Approx(0.2).epsilon(0.05));
  // T = 0.5 squares the probabilities: 0.25 : 0.09 : 0.04.
  const std::vector<double> cold = frequencies({0.5, 0, 1.0});
  CHECK(cold[0] == doctest::Approx(0.25 / 0.38).epsilon(0.02));
  CHECK(cold[2] == doctest::Approx(0.04 / 0.38).epsilon(0.1));
  // top-k 2 and top-p 0.6 both keep the first two, renormalised: 0.625 : 0.375, never the third.
  for (const Sampling& s : {Sampling{1.0, 2, 1.0}, Sampling{1.0, 0, 0.6}}) {
    const std::vector<double> f = frequencies(s);
    CHECK(f[0] == doctest::Approx(0.625).epsilon(0.02));
    CHECK(f[2] == 0.0);
  }
  // top-p 0.5 keeps the first alone (its 0.5 reaches p); greedy is the argmax.
  CHECK(frequencies({1.0, 0, 0.5})[0] == 1.0);
  Rng rng(1);
  CHECK(sample_token(logits.data(), 3, Sampling{}, rng) == 0);
  const std::vector<float> tied = {1.0f, 3.0f, 3.0f};
  CHECK(sample_token(tied.data(), 3, Sampling{}, rng) == 1);  // the first of equal maxima
}

TEST_CASE("bad sampling settings are refused by name") {
  CHECK(contains(usage_message([] { check_sampling({-1.0, 0, 1.0}); }), "--sample-temperature"));
  CHECK(contains(usage_message([] { check_sampling({NAN, 0, 1.0}); }), "--sample-temperature"));
  CHECK(contains(usage_message([] { check_sampling({1.0, -2, 1.0}); }), "--top-k must be"));
  CHECK(contains(usage_message([] { check_sampling({1.0, 0, 0.0}); }), "--top-p must be"));
  CHECK(contains(usage_message([] { check_sampling({1.0, 0, 1.5}); }), "--top-p must be"));
  CHECK(contains(usage_message([] { check_sampling({0.0, 5, 1.0}); }), "--sample-temperature"));
  CHECK_NOTHROW(check_sampling({0.7, 5, 0.9}));
}

TEST_CASE("a token task's prompt reads its symbols and names, and prints them back") {
  TokenTaskSettings settings;
  settings.n_symbols = 4;
  const TokenText text(TaskKind::kCopy, settings, nullptr);
  const SpecialTokens sp = special_tokens(TaskKind::kCopy, settings);
  CHECK(text.parse(" 3 1\tSEP ") == std::vector<int>{sp.bos, 3, 1, sp.sep});
  CHECK(text.parse("BOS 0") == std::vector<int>{sp.bos, 0});
  CHECK(text.text_of(2) == " 2");
  CHECK(text.text_of(sp.sep) == " SEP");
  const std::string bad = usage_message([&] { text.parse("1 2 7"); });
  CHECK(contains(bad, "'7' at offset 4"));
  CHECK(contains(bad, "0..3"));
  CHECK(contains(usage_message([&] { text.parse("1 x"); }), "'x' at offset 2"));
  CHECK(contains(usage_message([&] { text.parse("  "); }), "the prompt is empty"));
  CHECK(contains(usage_message([&] { text.parse("BOS"); }), "the prompt is empty"));
}

TEST_CASE("a text run's prompt reads its corpus's bytes, and a byte it lacks is named") {
  const std::shared_ptr<const TextCorpus> corpus = open_corpus(corpus_path(""));
  const TokenText text(TaskKind::kText, TokenTaskSettings{}, corpus.get());
  const std::vector<int> tokens = text.parse("God");
  REQUIRE(tokens.size() == 4);
  std::string back;
  for (size_t i = 1; i < tokens.size(); ++i) back += text.text_of(tokens[i]);
  CHECK(back == "God");
  CHECK(text.text_of(tokens[0]) == "<BOS>");
  CHECK(contains(usage_message([&] { text.parse("Go\x01"); }), "byte 0x01 at offset 2"));
  CHECK(contains(usage_message([&] { text.parse(""); }), "the prompt is empty"));
}
