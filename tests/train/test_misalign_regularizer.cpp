// The misalignment regularizer (train/misalign_regularizer.hpp): the App. D views and their pairs,
// the overlap loss against the direct two-forward definition (loss and gradient), a training run
// with it, and the settings it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "tasks/token_tasks.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/small_model.hpp"
#include "train/misalign_regularizer.hpp"
#include "train/misalignment.hpp"
#include "train/run_settings.hpp"
#include "train/vcl.hpp"

using namespace lenlab;
using namespace lenlab::test;
using DModel = Model<CpuBackend<double>>;

namespace {

TokenTaskSettings markov_settings() {
  TokenTaskSettings t;
  t.n_symbols = 4;
  return t;
}

// The pairs' loss Σ w·SCE of `batch` (its cross-entropy weights ignored), and with grad its
// parameter gradients in `grads`.
double pair_loss(DModel& m, const Batch& batch, std::vector<double>* grads) {
  PackedBatch<CpuBackend<double>> in;
  in.pack({&batch}, m.config());
  m.forward(in);
  const int R = in.n_token, V = m.config().vocab_size;
  std::vector<double> dlogits(static_cast<size_t>(R) * V, 0.0);
  double loss = 0;
  cpu::pair_alignment_loss(dlogits.data(), &loss, m.token_logits(), in.pair_first.data(),
                           in.pair_second.data(), in.pair_weights.data(),
                           in.pair_entropy_weights.data(), in.n_pairs, R, V);
  if (grads) {
    m.zero_grad();
    m.backward(in, nullptr, dlogits.data());
    *grads = m.gradients(0);
  }
  return loss;
}

// The direct definition of the same loss: for every pair, its two contexts as sequences of their
// own ([BOS] + the symbols each row has seen), the pair between their last rows.
Batch direct_batch(const Batch& views) {
  Batch direct;
  const ReadoutPairs& pairs = views.token.pairs;
  for (int p = 0; p < pairs.size(); ++p) {
    for (int side = 0; side < 2; ++side) {
      const int row = views.token.rows[side == 0 ? pairs.first[p] : pairs.second[p]];
      int s = 0;
      while (views.offsets[s + 1] <= row) ++s;
      append_tokens(direct, std::vector<int32_t>(views.tokens.begin() + views.offsets[s],
                                                 views.tokens.begin() + row + 1));
      direct.token.rows.push_back(direct.offsets.back() - 1);
      direct.token.labels.push_back(-1);
      direct.token.weights.push_back(0.0);
    }
    direct.token.pairs.first.push_back(2 * p);
    direct.token.pairs.second.push_back(2 * p + 1);
    direct.token.pairs.weights.push_back(pairs.weights[p]);
    direct.token.pairs.entropy_weights.push_back(pairs.entropy_weights[p]);
  }
  return direct;
}

}  // namespace

TEST_CASE(
    "misalignment regularizer: two l_train windows of one sequence, paired at the same symbol") {
  const TokenTaskSettings t = markov_settings();
  const MarkovChain chain(t.n_symbols, t.markov_order, t.markov_concentration, t.markov_seed);
  const int bos = special_tokens(TaskKind::kMarkov, t).bos;
  for (const auto& [extra, l] : {std::pair{"0:0.5", 12}, {"0.25:0.5", 9}, {"0:1", 8}}) {
    CAPTURE(extra);
    CAPTURE(l);
    const MisalignRegularizer reg{0.3, extra};
    const OverlapRange range = overlap_range(reg, l);
    CHECK(range.min_context == (2 * range.extra_hi <= l ? (l + 1) / 2 : 1));
    Rng rng(7);
    const int B = 40;
    const Batch b = misalign_train_batch(t, chain, l, B, reg, rng);
    REQUIRE(b.n_seq() == 2 * B);
    double ce_weight = 0;
    for (int r = 0; r < b.token.size(); ++r) {
      ce_weight += b.token.weights[r];
      if (b.token.labels[r] >= 0) CHECK(b.token.labels[r] == b.tokens[b.token.rows[r] + 1]);
      if (b.token.labels[r] < 0) CHECK(b.token.weights[r] == 0.0);
    }
    CHECK(ce_weight == doctest::Approx(1.0).epsilon(1e-12));  // L_train: a mean over the views
    // Replayed draw by draw: l_extra, then one sequence of l + l_extra symbols; view 1 holds its
    // first l symbols, view 2 its last l.
    Rng replay(7);
    std::vector<int> extras;
    for (int i = 0; i < B; ++i) {
      const int e = static_cast<int>(replay.uniform_int(range.extra_lo, range.extra_hi));
      std::vector<int32_t> x;
      chain.append_sample(x, l + e, replay);
      extras.push_back(e);
      const int v1 = b.offsets[2 * i], v2 = b.offsets[2 * i + 1];
      REQUIRE(b.seq_len(2 * i) == l + 1);
      REQUIRE(b.seq_len(2 * i + 1) == l + 1);
      CHECK(b.tokens[v1] == bos);
      CHECK(b.tokens[v2] == bos);
      for (int j = 0; j < l; ++j) {
        CHECK(b.tokens[v1 + 1 + j] == x[j]);
        CHECK(b.tokens[v2 + 1 + j] == x[e + j]);
      }
    }
    CHECK(*std::min_element(extras.begin(), extras.end()) == range.extra_lo);
    CHECK(*std::max_element(extras.begin(), extras.end()) == range.extra_hi);
    // Every pair: the same symbol in both views, view 1's context longer by e, both in range.
    const ReadoutPairs& pairs = b.token.pairs;
    REQUIRE(pairs.size() > 0);
    double pair_weight = 0;
    for (int p = 0; p < pairs.size(); ++p) {
      const int r1 = b.token.rows[pairs.first[p]], r2 = b.token.rows[pairs.second[p]];
      int s = 0;
      while (b.offsets[s + 1] <= r1) ++s;
      REQUIRE(s % 2 == 0);
      REQUIRE(r2 >= b.offsets[s + 1]);
      REQUIRE(r2 < b.offsets[s + 2]);
      const int ctx1 = r1 - b.offsets[s], ctx2 = r2 - b.offsets[s + 1];
      CHECK(b.tokens[r1] == b.tokens[r2]);
      CHECK(ctx1 - ctx2 == extras[s / 2]);
      CHECK(ctx1 <= l);
      CHECK(ctx2 >= range.min_context);
      pair_weight += pairs.weights[p];
    }
    CHECK(pair_weight == doctest::Approx(reg.alpha).epsilon(1e-12));
  }
}

TEST_CASE(
    "misalignment regularizer: the overlap loss and its gradient equal the direct two-forward "
    "definition, and the metric's SCE") {
  const TokenTaskSettings t = markov_settings();
  const MarkovChain chain(t.n_symbols, t.markov_order, t.markov_concentration, t.markov_seed);
  for (PositionalEncoding pe : {PositionalEncoding::kNope, PositionalEncoding::kLearned,
                                PositionalEncoding::kAlibi, PositionalEncoding::kRope}) {
    CAPTURE(positional_encoding_name(pe));
    ModelConfig c = small_config(pe);
    c.vocab_size = token_vocab_size(TaskKind::kMarkov, t);
    c.scalar_head = false;
    c.token_head = true;
    DModel model(c);
    model.init(3);
    std::vector<double> p = model.parameters(0);
    Rng prng(5);
    for (double& x : p) x += 0.3 * prng.normal();  // large enough for every path to matter
    model.set_parameters(0, p.data());

    Rng rng(11);
    const Batch views = misalign_train_batch(t, chain, 10, 3, {0.5, "0:0.5"}, rng);
    const Batch direct = direct_batch(views);
    std::vector<double> g_overlap, g_direct;
    const double overlap = pair_loss(model, views, &g_overlap);
    const double two_forwards = pair_loss(model, direct, &g_direct);
    CHECK(overlap > 0);
    CHECK(overlap == doctest::Approx(two_forwards).epsilon(1e-12));
    check_close_to_largest(g_overlap, g_direct, 1e-12);

    // The metric's SCE (train/misalignment.hpp) on the direct pairs' logits gives the same sum.
    PackedBatch<CpuBackend<double>> in;
    in.pack({&direct}, c);
    model.infer(in);
    const std::vector<double> logits = model.download_token_logits(in);
    double metric = 0;
    const int V = c.vocab_size;
    for (int q = 0; q < direct.token.pairs.size(); ++q)
      metric += direct.token.pairs.weights[q] *
                symmetric_cross_entropy(&logits[static_cast<size_t>(2 * q) * V],
                                        &logits[static_cast<size_t>(2 * q + 1) * V], V);
    CHECK(overlap == doctest::Approx(metric).epsilon(1e-10));
  }
}

TEST_CASE("misalignment regularizer: VCL composes with it and never weights a pair-only row") {
  const TokenTaskSettings t = markov_settings();
  const MarkovChain chain(t.n_symbols, t.markov_order, t.markov_concentration, t.markov_seed);
  Rng rng(2);
  Batch b = misalign_train_batch(t, chain, 8, 6, {0.2, "0:0.5"}, rng);
  apply_vcl(b, {3, 0.0}, rng);
  double total = 0;
  for (int r = 0; r < b.token.size(); ++r) {
    if (b.token.labels[r] < 0) CHECK(b.token.weights[r] == 0.0);
    total += b.token.weights[r];
  }
  CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("misalignment regularizer: a run trains, logs L_misalign, and repeats to the bit") {
  auto train = [](const std::string& name) {
    const fs::path dir = run_dir(name);
    const CliResult r =
        run_cli({"train", "--task",    "markov",    "--n-symbols",    "4",  "--pe",
                 "rope",  "--l-train", "8",         "--l-test",       "12", "--steps",
                 "40",    "--batch",   "8",         "--d-model",      "16", "--n-head",
                 "2",     "--d-ff",    "32",        "--eval-samples", "20", "--misalign-alpha",
                 "0.5",   "--out",     dir.string()});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    return dir;
  };
  const fs::path a = train("misalign_a"), b = train("misalign_b");
  const auto rows = read_csv(a / "loss.csv");
  REQUIRE(rows.size() == 40);
  for (const auto& row : rows) {
    const double loss = std::stod(row.at("loss")), mis = std::stod(row.at("misalign"));
    CHECK(std::isfinite(loss));
    CHECK(mis > 0);
    CHECK(loss > 0.5 * mis);  // loss = L_train + 0.5·L_misalign
  }
  CHECK(read_text(a / "loss.csv") == read_text(b / "loss.csv"));
  CHECK(read_text(a / "results.csv") == read_text(b / "results.csv"));
}

TEST_CASE(
    "misalignment regularizer: kind kl drops the entropies, and the control draws the same views") {
  const TokenTaskSettings t = markov_settings();
  const MarkovChain chain(4, 2, 0.5, 1);
  auto batch = [&](MisalignRegularizer reg) {
    Rng rng(5);
    return misalign_train_batch(t, chain, 10, 6, reg, rng);
  };
  const Batch sce = batch({0.3, "0:0.5"}), kl = batch({0.3, "0:0.5", "kl"}),
              control = batch({0.0, "0:0.5", "sce", 1});
  REQUIRE(sce.token.pairs.size() > 0);
  for (const Batch* b : {&kl, &control}) {  // the same sequences, rows, labels and pairs
    CHECK(b->tokens == sce.tokens);
    CHECK(b->token.rows == sce.token.rows);
    CHECK(b->token.labels == sce.token.labels);
    CHECK(b->token.weights == sce.token.weights);
    CHECK(b->token.pairs.first == sce.token.pairs.first);
    CHECK(b->token.pairs.second == sce.token.pairs.second);
  }
  const double w = 0.3 / sce.token.pairs.size();
  for (int p = 0; p < sce.token.pairs.size(); ++p) {
    CHECK(sce.token.pairs.weights[p] == doctest::Approx(w));
    CHECK(sce.token.pairs.entropy_weights[p] == sce.token.pairs.weights[p]);
    CHECK(kl.token.pairs.weights[p] == sce.token.pairs.weights[p]);
    CHECK(kl.token.pairs.entropy_weights[p] == 0.0);
    CHECK(control.token.pairs.weights[p] == 0.0);
    CHECK(control.token.pairs.entropy_weights[p] == 0.0);
  }
  // On a model: the kl batch's pair loss is the SCE's minus the entropies, and the control's 0.
  ModelConfig c = small_config(PositionalEncoding::kRope);
  c.vocab_size = token_vocab_size(TaskKind::kMarkov, t);
  c.scalar_head = false;
  c.token_head = true;
  DModel m(c);
  m.init(3);
  const double l_sce = pair_loss(m, sce, nullptr), l_kl = pair_loss(m, kl, nullptr);
  CHECK(pair_loss(m, control, nullptr) == 0.0);
  CHECK(l_kl > 0);
  CHECK(l_kl < l_sce);
}

TEST_CASE("misalignment regularizer: the control run trains on the views without a misalign term") {
  const fs::path dir = run_dir("misalign_control");
  const CliResult r =
      run_cli({"train", "--task",    "markov",    "--n-symbols",    "4",  "--pe",
               "rope",  "--l-train", "8",         "--l-test",       "10", "--steps",
               "20",    "--batch",   "4",         "--d-model",      "16", "--n-head",
               "2",     "--d-ff",    "32",        "--eval-samples", "10", "--misalign-control",
               "1",     "--out",     dir.string()});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const auto rows = read_csv(dir / "loss.csv");
  REQUIRE(rows.size() == 20);
  CHECK_FALSE(rows[0].count("misalign"));
  CHECK((r.out + r.err).find("cross-entropy on the regularizer's views") != std::string::npos);
  const std::string manifest = read_text(dir / "manifest.json");
  CHECK(manifest.find("\"misalign_control\": 1") != std::string::npos);
  CHECK(manifest.find("\"divergence\"") != std::string::npos);  // the metric's parts
}

TEST_CASE("misalignment regularizer: settings without a meaning are refused, naming the flag") {
  auto refused = [](MisalignRegularizer reg, TaskKind task, int l_train, const std::string& what) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(check_misalign_regularizer(reg, task, l_train),
                         doctest::Contains(what.c_str()), UsageError);
  };
  refused({-0.1, "0:0.5"}, TaskKind::kMarkov, 16, "--misalign-alpha (misalign_alpha)");
  refused({NAN, "0:0.5"}, TaskKind::kMarkov, 16, "finite number >= 0");
  for (const char* bad : {"0.5", "-0.5:0.5", "0:1.5", "0.6:0.5", "a:b", "0:0.5x", ":", ""})
    refused({0.1, bad}, TaskKind::kMarkov, 16, "--misalign-extra (misalign_extra) must be LO:HI");
  refused({0.0, "0:0.25"}, TaskKind::kMarkov, 16, "no effect without --misalign-alpha");
  refused({0.1, "0:0.5"}, TaskKind::kLength, 16, "task 'markov' only, not 'length'");
  refused({0.1, "0:0.5"}, TaskKind::kCopy, 16, "no longer a prompt");
  refused({0.1, "0:0.01"}, TaskKind::kMarkov, 16, "l_extra in 1..0");
  refused({0.1, "0.5:0.5"}, TaskKind::kMarkov, 3, "leaves no overlap row");
  refused({0.1, "0:0.5", "js"}, TaskKind::kMarkov, 16, "must be one of 'sce' or 'kl'");
  refused({0.0, "0:0.5", "kl"}, TaskKind::kMarkov, 16, "--misalign-kind kl has no effect");
  refused({0.0, "0:0.5", "sce", 2}, TaskKind::kMarkov, 16, "must be 0 or 1");
  refused({0.1, "0:0.5", "sce", 1}, TaskKind::kMarkov, 16, "give one or the other");
  refused({0.0, "0:0.5", "sce", 1}, TaskKind::kLength, 16, "--misalign-control 1: the");
  CHECK_NOTHROW(check_misalign_regularizer({0.0, "0:0.25", "sce", 1}, TaskKind::kMarkov, 16));
  CHECK_NOTHROW(check_misalign_regularizer({0.1, "0:0.5", "kl"}, TaskKind::kMarkov, 16));
  CHECK_NOTHROW(check_misalign_regularizer({0.0, "0:0.5"}, TaskKind::kLength, 10));
  CHECK_NOTHROW(check_misalign_regularizer({1.0, "0:1"}, TaskKind::kMarkov, 2));
  CHECK(parse_extra_range("0.25:0.5") == std::pair{0.25, 0.5});
}
