// The token tasks through the one trainer and evaluator: the evaluator's metrics against brute
// force over the training forward's logits (chunked, several cells, passkey depths, Markov
// entropies), the token loss against a hand computation, results.csv and positions.csv round
// trips, the run settings, and `lenlab train`/`eval` on token tasks end to end.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/train/token_eval_support.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST_CASE("token evaluation: every metric equals brute force over the logits, in chunks") {
  TokenTaskSettings settings;
  settings.n_symbols = 5;
  settings.key_length = 2;
  const MarkovChain chain(settings.n_symbols, settings.markov_order, settings.markov_concentration,
                          settings.markov_seed);
  struct Case {
    TaskKind task;
    std::vector<int> lengths;
    std::vector<double> depths;
  };
  for (const Case& c : {Case{TaskKind::kCopy, {1, 3, 6}, {}}, Case{TaskKind::kReverse, {4}, {}},
                        Case{TaskKind::kRecall, {2, 5}, {}}, Case{TaskKind::kParity, {3, 9}, {}},
                        Case{TaskKind::kPasskey, {3, 7}, {0.0, 1.0, kNoDepth}},
                        Case{TaskKind::kMarkov, {1, 4, 9}, {}},
                        // Answers ending at END: sequences of one length answer at different rows.
                        Case{TaskKind::kStackManipulation, {2, 7}, {}},
                        Case{TaskKind::kBinaryAddition, {3, 8}, {}}}) {
    CAPTURE(task_name(c.task));
    Transformer<float> model(token_model(c.task, settings, 40));
    model.init(7);
    EvalJob job;
    job.task = c.task;
    job.lengths = c.lengths;
    job.eval_samples = 9;
    job.eval_seed = 3;
    job.token_settings = &settings;
    job.chain = c.task == TaskKind::kMarkov ? &chain : nullptr;
    job.depths = c.depths;
    int outputs = 0;
    job.on_token_output = [&](const Batch&, int, double, int, const std::vector<double>& p,
                              const std::vector<int>&) {
      ++outputs;
      for (const double x : p) CHECK((x > 0 && x <= 1));
    };
    // 40 rows per forward: the 9 sequences of a cell go through in several chunks.
    const std::vector<LengthResult> got = evaluate(model, {job}, {}, 40)[0];
    const std::vector<double> depths = c.depths.empty() ? std::vector<double>{kNoDepth} : c.depths;
    REQUIRE(got.size() == c.lengths.size() * depths.size());
    CHECK(outputs == static_cast<int>(got.size()) * 9);
    size_t i = 0;
    for (const int l : c.lengths)
      for (double d : {kNoDepth, 0.0, 1.0}) {  // ascending (length, depth), kNoDepth first
        if (std::find(depths.begin(), depths.end(), d) == depths.end()) continue;
        CAPTURE(l);
        CAPTURE(d);
        const LengthResult& r = got[i++];
        CHECK(r.token);
        CHECK(r.length == l);
        CHECK(r.depth == d);
        CHECK(r.n_sequences == 9);
        const Batch set = token_eval_batch(c.task, settings, job.chain, l, 9, job.eval_seed, d);
        const LengthResult want = brute_force(model, set, job.chain, l);
        CHECK(r.n_answer_tokens == set.token.size());
        CHECK(r.token_accuracy == doctest::Approx(want.token_accuracy));
        CHECK(r.exact_match == doctest::Approx(want.exact_match));
        CHECK(r.cross_entropy == doctest::Approx(want.cross_entropy).epsilon(1e-4));
        if (c.task == TaskKind::kMarkov) {
          CHECK(r.excess_ce == doctest::Approx(want.excess_ce).epsilon(1e-4));
          CHECK(r.chain_cross_entropy == doctest::Approx(want.chain_cross_entropy).epsilon(1e-12));
          REQUIRE(r.positions.size() == static_cast<size_t>(l));
          for (int t = 0; t < l; ++t) {
            CHECK(r.positions[t].position == t + 1);
            CHECK(r.positions[t].entropy == want.positions[t].entropy);
            CHECK(r.positions[t].cross_entropy ==
                  doctest::Approx(want.positions[t].cross_entropy).epsilon(1e-4));
            CHECK(r.positions[t].chain_cross_entropy ==
                  doctest::Approx(want.positions[t].chain_cross_entropy).epsilon(1e-12));
          }
        } else {
          CHECK(std::isnan(r.excess_ce));
          CHECK(std::isnan(r.chain_cross_entropy));
          CHECK(r.positions.empty());
        }
      }
  }
}

TEST_CASE("runs evaluated together at different depths each get their own cells and lengths") {
  TokenTaskSettings settings;
  settings.n_symbols = 5;
  settings.key_length = 2;
  Model<CpuBackend<float>> model(token_model(TaskKind::kPasskey, settings, 12), 2);
  model.init(0, 1);
  model.init(1, 2);
  std::vector<EvalJob> jobs(2);
  for (EvalJob& j : jobs) {
    j.task = TaskKind::kPasskey;
    j.lengths = {3, 4};
    j.eval_samples = 4;
    j.eval_seed = 1;
    j.token_settings = &settings;
  }
  jobs[0].depths = {0.0};
  jobs[1].depths = {0.0, 1.0};
  std::vector<std::vector<int>> done(2);
  const auto results = evaluate(model, jobs, [&](int k, int l) { done[k].push_back(l); });
  CHECK(results[0].size() == 2);
  CHECK(results[1].size() == 4);
  CHECK(done[0] == std::vector<int>{3, 4});
  CHECK(done[1] == std::vector<int>{3, 4});
  // Model 0 alone gives the same numbers: sharing a forward changes nothing.
  Transformer<float> alone(token_model(TaskKind::kPasskey, settings, 12));
  alone.init(1);
  const auto single = evaluate(alone, {jobs[0]})[0];
  for (size_t i = 0; i < 2; ++i)
    CHECK(single[i].cross_entropy == doctest::Approx(results[0][i].cross_entropy).epsilon(1e-5));
}

TEST_CASE("a token loss with all its weight on one row is that row's cross-entropy by hand") {
  TokenTaskSettings settings;
  settings.n_symbols = 3;
  const ModelConfig c = token_model(TaskKind::kCopy, settings, 12);
  Transformer<double> model(c);
  model.init(2);
  Rng rng(5);
  Batch b = token_train_batch(TaskKind::kCopy, settings, nullptr, 4, 3, rng);
  const int pick = b.token.size() / 2;
  for (int r = 0; r < b.token.size(); ++r) b.token.weights[r] = r == pick ? 1.0 : 0.0;
  PackedBatch<CpuBackend<double>> packed;
  packed.pack({&b}, c);
  model.forward(packed);
  const int V = c.vocab_size, R = packed.n_token;
  std::vector<double> dlogits(static_cast<size_t>(R) * V), loss(1);
  CpuBackend<double>::cross_entropy_loss(dlogits.data(), loss.data(), model.token_logits(),
                                         packed.token_labels.data(), packed.token_weights.data(), R,
                                         V, model.models());
  const double* z = model.token_logits() + static_cast<size_t>(pick) * V;
  double norm = 0;
  for (int v = 0; v < V; ++v) norm += std::exp(z[v]);
  const double by_hand = std::log(norm) - z[b.token.labels[pick]];
  CHECK(by_hand > 0);
  CHECK(loss[0] == doctest::Approx(by_hand).epsilon(1e-12));
}

TEST_CASE("token results.csv and positions.csv read back what was written") {
  LengthResult a;
  a.token = true;
  a.length = 5;
  a.depth = kNoDepth;
  a.token_accuracy = 0.75;
  a.exact_match = 0.5;
  a.cross_entropy = 0.625;
  a.n_sequences = 8;
  a.n_answer_tokens = 4;
  LengthResult b = a;
  b.depth = 0.25;
  LengthResult m = a;
  m.length = 7;
  m.excess_ce = 0.125;
  m.chain_cross_entropy = 0.5;
  m.positions = {{1, 2.0, 1.5, 0.25, 1.25}, {2, 1.0, 0.75, 0.5, 0.875}};
  const std::string text = results_csv_text({a, b, m});
  CHECK(text.rfind("length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,"
                   "n_answer_tokens,chain_cross_entropy\n5,,0.75,0.5,0.625,nan,8,4,nan\n5,0.25,",
                   0) == 0);
  const std::vector<LengthResult> back = parse_results_csv(text, "r.csv");
  REQUIRE(back.size() == 3);
  CHECK(back[0].token);
  CHECK(back[0].depth == kNoDepth);
  CHECK(back[1].depth == 0.25);
  CHECK(std::isnan(back[0].excess_ce));
  CHECK(back[2].excess_ce == 0.125);
  CHECK(back[2].chain_cross_entropy == 0.5);
  CHECK(back[2].n_answer_tokens == 4);
  const std::string positions = positions_csv_text(m);
  // The excess column subtracts the chain's loss on the tokens (0.875), not H_t (0.75).
  CHECK(positions.find("\n7,2,1,0.75,0.125,0.5,0.875\n") != std::string::npos);
  const std::vector<PositionResult> p = parse_positions_csv(positions, "p.csv");
  REQUIRE(p.size() == 2);
  CHECK(p[1].cross_entropy == 1.0);
  CHECK(p[1].entropy == 0.75);
  CHECK(p[1].token_accuracy == 0.5);
  CHECK(p[1].chain_cross_entropy == 0.875);
  CHECK(p[1].excess() == 0.125);
  // (length, depth) must ascend; depths lie in [0, 1].
  CHECK_THROWS_WITH_AS(parse_results_csv(results_csv_text({b, a}), "r.csv"),
                       doctest::Contains("must ascend"), UsageError);
  b.depth = 2;
  CHECK_THROWS_WITH_AS(parse_results_csv(results_csv_text({b}), "r.csv"),
                       doctest::Contains("not in [0, 1]"), UsageError);
  CHECK_THROWS_AS(results_csv_text({LengthResult{}, a}), std::logic_error);
}

TEST_CASE("results of an earlier lenlab: a markov excess against H_t is refused, others read") {
  const std::string before =
      "length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,"
      "n_answer_tokens\n";
  // A passkey or Chomsky run's file has no excess: it reads as it always did.
  const std::vector<LengthResult> old =
      parse_results_csv(before + "5,,0.75,0.5,0.625,nan,8,4\n", "old/results.csv");
  REQUIRE(old.size() == 1);
  CHECK(old[0].token_accuracy == 0.75);
  CHECK(std::isnan(old[0].chain_cross_entropy));
  // A markov file's excess_ce meant cross-entropy − mean H_t: refused, saying what to do.
  const auto refused = [](const std::function<void()>& read) {
    try {
      read();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string said =
      refused([&] { parse_results_csv(before + "5,,0.75,0.5,0.625,0.02,8,4\n", "m/results.csv"); });
  CHECK(said.find("m/results.csv holds a markov excess_ce measured by an earlier lenlab") == 0);
  CHECK(said.find("lenlab eval RUN --out NEW_FOLDER") != std::string::npos);
  const std::string positions_before =
      "length,position,cross_entropy,entropy,excess_ce,token_accuracy\n";
  CHECK(refused([&] {
          parse_positions_csv(positions_before + "3,1,1.5,1.38,0.12,0.25\n", "m/positions.csv");
        }).find("m/positions.csv holds a markov excess_ce") == 0);
  // A text run's positions (no entropy) read.
  CHECK(
      parse_positions_csv(positions_before + "3,1,1.5,nan,nan,0.25\n", "t/positions.csv").size() ==
      1);
  // Today's files: the chain's loss is nan exactly where the excess is.
  const std::string now = before.substr(0, before.size() - 1) + ",chain_cross_entropy\n";
  CHECK(refused([&] {
          parse_results_csv(now + "5,,0.75,0.5,0.625,0.02,8,4,nan\n", "r.csv");
        }).find("column chain_cross_entropy is 'nan'") != std::string::npos);
  CHECK(refused([&] {
          parse_results_csv(now + "5,,0.75,0.5,0.625,nan,8,4,0.6\n", "r.csv");
        }).find("column chain_cross_entropy is '0.6'") != std::string::npos);
}

TEST_CASE("a model that is the chain has an excess of exactly 0 on any test set") {
  // Scored with the chain's own log-probabilities, the excess over the chain's loss on the same
  // tokens is 0 at every length; the old excess (over the mean H_t) would carry the test set's
  // sampling noise instead.
  TokenTaskSettings s;
  s.n_symbols = 4;
  s.markov_order = 2;
  const MarkovChain chain(4, 2, 1.0, 7);
  for (const int length : {3, 16, 32}) {
    CAPTURE(length);
    const Batch set = token_eval_batch(TaskKind::kMarkov, s, &chain, length, 50, 11);
    const std::vector<double> h = chain.position_entropy(length);
    TokenScorer scorer(set, &chain, h.data(), length, kNoDepth);
    const std::vector<int32_t> offsets = token_readout_offsets(set);
    double mean_h = 0;
    for (int sq = 0; sq < set.n_seq(); ++sq)
      for (int a = 0; a < offsets[sq + 1] - offsets[sq]; ++a) {
        scorer.add(offsets[sq] + a, chain.log_prob(&set.token.labels[offsets[sq]], a), true);
        mean_h += h[a] / (set.n_seq() * (offsets[sq + 1] - offsets[sq]));
      }
    const LengthResult r = scorer.finish();
    CHECK(r.excess_ce == 0.0);
    CHECK(r.chain_cross_entropy == r.cross_entropy);
    for (const PositionResult& p : r.positions) CHECK(p.excess() == 0.0);
    // 50 sequences: the chain's own loss is not its expectation (what the old excess assumed).
    if (length > 2) CHECK(std::fabs(r.cross_entropy - mean_h) > 1e-4);
  }
}

TEST_CASE(
    "token settings: run ids keep their old form at the defaults, and resolve sizes the model") {
  TrainSpec s;
  const Json old = Json::parse(canonical_spec_text(s));
  for (const char* key :
       {"n_symbols", "key_length", "markov_order", "markov_concentration", "markov_seed", "depths"})
    CHECK(!old.contains(key));
  s.task = "copy";
  s.token.n_symbols = 8;
  s.l_train = 5;
  s.l_test = 20;
  CHECK(Json::parse(canonical_spec_text(s)).at("n_symbols") == 8);
  s.pe = "learned";
  ResolvedSpec r = resolve(s);
  CHECK(r.model.vocab_size == 12);
  CHECK(r.model.token_head);
  CHECK(!r.model.scalar_head);
  CHECK(r.model.max_positions == 42);  // BOS, 20 symbols, SEP, 20 copied
  CHECK(r.depths == std::vector<double>{kNoDepth});
  s.task = "passkey";
  r = resolve(s);
  CHECK(r.test_lengths.front() == 5);  // key_length 4: the shortest passkey is 5
  CHECK(r.depths == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  s.depths = "random,1,0.5";
  CHECK(resolve(s).depths == std::vector<double>{kNoDepth, 0.5, 1});
  s.task = "markov";
  r = resolve(s);
  REQUIRE(r.chain);
  CHECK(r.chain->n_symbols() == 8);
  CHECK(r.chain->order() == 2);
}
