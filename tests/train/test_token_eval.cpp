// The token tasks through the one trainer and evaluator: the evaluator's metrics against brute
// force over the training forward's logits (chunked, several cells, passkey depths, Markov
// entropies), the token loss against a hand computation, results.csv and positions.csv round
// trips, the run settings, and `lenlab train`/`eval` on token tasks end to end.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A small model for `task` with the task's vocabulary and a token head.
ModelConfig token_model(TaskKind task, const TokenTaskSettings& settings, int max_positions) {
  ModelConfig c;
  c.n_layer = 2;
  c.d_model = 16;
  c.n_head = 2;
  c.d_ff = 32;
  c.pe = PositionalEncoding::kLearned;
  c.max_positions = max_positions;
  c.vocab_size = token_vocab_size(task, settings);
  c.scalar_head = false;
  c.token_head = true;
  return c;
}

// The metrics of one cell computed directly: the training forward's logits on the whole set,
// log-softmax and argmax per answer row in double.
LengthResult brute_force(Transformer<float>& model, const Batch& set, const MarkovChain* chain,
                         int length) {
  PackedBatch<CpuBackend<float>> packed;
  packed.pack({&set}, model.config());
  model.forward(packed);
  const int V = model.config().vocab_size, R = set.token.size();
  const float* z = model.token_logits();
  const std::vector<int32_t> offsets = token_readout_offsets(set);
  const int S = set.n_seq(), A = offsets[1];  // markov: every sequence's rows
  LengthResult r;
  std::vector<double> ce_at(A, 0.0);
  double ce = 0, right = 0, whole = 0;
  for (int s = 0; s < S; ++s) {
    bool all = true;
    for (int a = 0; a < offsets[s + 1] - offsets[s]; ++a) {  // stack, binary: rows up to END
      const int i = offsets[s] + a;
      double norm = 0;
      int best = 0;
      for (int v = 0; v < V; ++v) {
        norm += std::exp(static_cast<double>(z[i * V + v]));
        if (z[i * V + v] > z[i * V + best]) best = v;
      }
      const double nll = std::log(norm) - z[i * V + set.token.labels[i]];
      ce += nll;
      if (chain) ce_at[a] += nll / S;
      right += best == set.token.labels[i];
      all = all && best == set.token.labels[i];
    }
    whole += all;
  }
  CHECK(R == offsets[S]);
  r.cross_entropy = ce / R;
  r.token_accuracy = right / R;
  r.exact_match = whole / S;
  if (chain) {
    const std::vector<double> h = chain->position_entropy(length);
    double mean_h = 0;
    for (int a = 0; a < A; ++a) {
      mean_h += h[a] / A;
      r.positions.push_back({a + 1, ce_at[a], h[a], 0.0});
    }
    r.excess_ce = r.cross_entropy - mean_h;
  }
  return r;
}

}  // namespace

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
          REQUIRE(r.positions.size() == static_cast<size_t>(l));
          for (int t = 0; t < l; ++t) {
            CHECK(r.positions[t].position == t + 1);
            CHECK(r.positions[t].entropy == want.positions[t].entropy);
            CHECK(r.positions[t].cross_entropy ==
                  doctest::Approx(want.positions[t].cross_entropy).epsilon(1e-4));
          }
        } else {
          CHECK(std::isnan(r.excess_ce));
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
  m.positions = {{1, 2.0, 1.5, 0.25}, {2, 1.0, 0.75, 0.5}};
  const std::string text = results_csv_text({a, b, m});
  CHECK(text.rfind("length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,"
                   "n_answer_tokens\n5,,0.75,0.5,0.625,nan,8,4\n5,0.25,",
                   0) == 0);
  const std::vector<LengthResult> back = parse_results_csv(text, "r.csv");
  REQUIRE(back.size() == 3);
  CHECK(back[0].token);
  CHECK(back[0].depth == kNoDepth);
  CHECK(back[1].depth == 0.25);
  CHECK(std::isnan(back[0].excess_ce));
  CHECK(back[2].excess_ce == 0.125);
  CHECK(back[2].n_answer_tokens == 4);
  const std::vector<PositionResult> p = parse_positions_csv(positions_csv_text(m), "p.csv");
  REQUIRE(p.size() == 2);
  CHECK(p[1].cross_entropy == 1.0);
  CHECK(p[1].entropy == 0.75);
  CHECK(p[1].token_accuracy == 0.5);
  // (length, depth) must ascend; depths lie in [0, 1].
  CHECK_THROWS_WITH_AS(parse_results_csv(results_csv_text({b, a}), "r.csv"),
                       doctest::Contains("must ascend"), UsageError);
  b.depth = 2;
  CHECK_THROWS_WITH_AS(parse_results_csv(results_csv_text({b}), "r.csv"),
                       doctest::Contains("not in [0, 1]"), UsageError);
  CHECK_THROWS_AS(results_csv_text({LengthResult{}, a}), std::logic_error);
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

TEST_CASE("lenlab train and eval on a token task: learned, reproduced, and predictions agree") {
  const fs::path dir = run_dir("token-eval");
  const fs::path run = dir / "run";
  // Copy on 4 symbols, trained on lengths 1..4: learned exactly in range (measured: accuracy 1
  // at lengths 1..4, 0.92 at 5, 0.80 at 6).
  const CliResult r = run_cli(
      {"train",    "--task", "copy",      "--n-symbols", "4",       "--l-train", "4",
       "--l-test", "6",      "--steps",   "1000",        "--batch", "32",        "--warmup",
       "50",       "--lr",   "3e-3",      "--n-layer",   "2",       "--d-model", "32",
       "--n-head", "2",      "--d-ff",    "64",          "--pe",    "learned",   "--eval-samples",
       "50",       "--out",  run.string()});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const auto rows = read_csv(run / "results.csv");
  REQUIRE(rows.size() == 6);
  for (int l = 1; l <= 4; ++l) CHECK(std::stod(rows[l - 1].at("token_accuracy")) > 0.97);
  const Json m = Json::parse(read_text(run / "manifest.json"));
  CHECK(m.at("mean_token_accuracy_within_l_train").get<double>() > 0.97);
  CHECK(m.at("final_train_loss").get<double>() < 0.05);

  // The same settings again: results.csv exactly; with --predictions, every sequence.
  const fs::path again = dir / "again";
  const CliResult e = run_cli({"eval", run.string(), "--predictions", "--out", again.string()});
  INFO(e.err);
  REQUIRE(e.rc == 0);
  CHECK(read_text(again / "results.csv") == read_text(run / "results.csv"));
  const auto pred = read_csv(again / "predictions.csv");
  REQUIRE(pred.size() == 6 * 50);
  // Per length: the argmax hits and −log p of predictions.csv give results.csv's numbers.
  for (int l = 1; l <= 6; ++l) {
    double right = 0, nll = 0, n = 0;
    for (const auto& row : pred) {
      if (row.at("length") != std::to_string(l)) continue;
      const auto labels = split(row.at("labels"), ' '), p = split(row.at("p_label"), ' '),
                 arg = split(row.at("argmax"), ' ');
      REQUIRE(labels.size() == static_cast<size_t>(l));
      REQUIRE((p.size() == labels.size() && arg.size() == labels.size()));
      CHECK(split(row.at("tokens"), ' ').size() == static_cast<size_t>(2 * l + 2));
      for (size_t a = 0; a < labels.size(); ++a) {
        right += labels[a] == arg[a];
        nll -= std::log(std::stod(p[a]));
        ++n;
      }
    }
    CAPTURE(l);
    CHECK(right / n == doctest::Approx(std::stod(rows[l - 1].at("token_accuracy"))));
    CHECK(nll / n == doctest::Approx(std::stod(rows[l - 1].at("cross_entropy"))).epsilon(1e-6));
  }

  // The learned table holds 2·6 + 2 = 14 positions: length 7 needs 16.
  const CliResult past =
      run_cli({"eval", run.string(), "--lengths", "7", "--out", (dir / "past").string()});
  check_one_error_line(past);
  CHECK(past.err.find("choose lengths up to 6") != std::string::npos);
  CHECK(!fs::exists(dir / "past"));
  // --depths is passkey's.
  const CliResult depths =
      run_cli({"eval", run.string(), "--depths", "0.5", "--out", (dir / "depths").string()});
  check_one_error_line(depths);
  CHECK(depths.err.find("passkey") != std::string::npos);
}

TEST_CASE("lenlab train on markov writes positions.csv, and passkey a row per length and depth") {
  const fs::path dir = run_dir("token-markov");
  const std::vector<std::string> tiny = {"--steps",   "20", "--n-layer",      "1",
                                         "--d-model", "8",  "--n-head",       "2",
                                         "--d-ff",    "16", "--eval-samples", "5"};
  std::vector<std::string> markov = {"train",
                                     "--task",
                                     "markov",
                                     "--n-symbols",
                                     "4",
                                     "--l-train",
                                     "3",
                                     "--lengths",
                                     "2,6",
                                     "--out",
                                     (dir / "markov").string()};
  markov.insert(markov.end(), tiny.begin(), tiny.end());
  REQUIRE(run_cli(markov).rc == 0);
  const std::vector<PositionResult> p =
      parse_positions_csv(read_text(dir / "markov" / "positions.csv"), "positions.csv");
  REQUIRE(p.size() == 6);  // the longest test length's positions
  const MarkovChain chain(4, 2, 0.5, 1);
  const std::vector<double> h = chain.position_entropy(6);
  for (int t = 0; t < 6; ++t) CHECK(p[t].entropy == doctest::Approx(h[t]).epsilon(1e-8));
  const auto rows = read_csv(dir / "markov" / "results.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].at("excess_ce") != "nan");

  std::vector<std::string> passkey = {"train",
                                      "--task",
                                      "passkey",
                                      "--key-length",
                                      "2",
                                      "--l-train",
                                      "4",
                                      "--l-test",
                                      "5",
                                      "--depths",
                                      "0,1",
                                      "--out",
                                      (dir / "passkey").string()};
  passkey.insert(passkey.end(), tiny.begin(), tiny.end());
  REQUIRE(run_cli(passkey).rc == 0);
  const auto cells = read_csv(dir / "passkey" / "results.csv");
  REQUIRE(cells.size() == 6);  // lengths 3, 4, 5 at depths 0 and 1
  CHECK(cells[0].at("length") == "3");
  CHECK(cells[0].at("depth") == "0");
  CHECK(cells[1].at("depth") == "1");
  CHECK(cells[5].at("length") == "5");
  CHECK(!fs::exists(dir / "passkey" / "positions.csv"));
}

TEST_CASE("a token experiment runs end to end: length, depth and position figures and the report") {
  const fs::path dir = run_dir("token-experiment");
  const fs::path config = dir / "tokens.toml";
  write_raw(config, R"(seeds = [1, 2]
[defaults]
steps = 20
batch_size = 8
n_layer = 1
d_model = 8
n_head = 2
d_ff = 16
eval_samples = 6
key_length = 2
l_train = 4
lengths = "3..6"
[figures.pk]
task = "passkey"
depths = "0,1"
vary = "pe"
values = ["nope", "alibi"]
[figures.pk_depth]
task = "passkey"
depths = "0,1"
plot = "depth"
metric = "exact_match"
vary = "pe"
values = ["nope", "alibi"]
[figures.mk]
task = "markov"
n_symbols = 3
plot = "position"
vary = "pe"
values = ["nope", "rope"]
)");
  const fs::path out = dir / "out";
  const CliResult r = run_cli({"run", config.string(), "--jobs", "2", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.rc == 0);
  // pk and pk_depth share their 4 runs; mk has 4 of its own.
  int runs = 0;
  for (const auto& e : fs::directory_iterator(out / "runs")) runs += e.is_directory();
  CHECK(runs == 8);
  // A row per line × seed × length (passkey's per depth too) or per position: one header for all.
  const auto pk = read_csv(out / "figpk.csv");
  CHECK(pk.size() == 2 * 2 * 4 * 2);
  CHECK(pk.front().at("depth") == "0");
  CHECK(!pk.front().at("exact_match").empty());
  const auto mk = read_csv(out / "figmk.csv");
  CHECK(mk.size() == 2 * 2 * 6);  // positions 1..6 of length 6
  CHECK(mk.back().at("position") == "6");
  for (const char* f : {"figpk.gp", "figpk_depth.gp", "figmk.gp", "figpk_depth.dat"})
    CHECK(fs::exists(out / f));
  const std::string report = read_text(out / "report.md");
  CHECK(report.find("## Token tasks") != std::string::npos);
  CHECK(report.find("### Figure pk_depth") != std::string::npos);
}
