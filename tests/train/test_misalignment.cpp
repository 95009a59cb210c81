// The long-short misalignment metric (train/misalignment.hpp): the divergence against its
// formula, the views against the sequences they come from, identical views, and K models at once
// against one at a time.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "train/misalignment.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

TEST_CASE("misalignment: the symmetric cross-entropy against its formula, and SCE(p, p) = 2H(p)") {
  const std::vector<double> z1 = {0.3, -1.2, 2.0, 0.0}, z2 = {1.0, 0.5, -0.5, 0.2};
  auto softmax = [](const std::vector<double>& z) {
    double sum = 0;
    for (double x : z) sum += std::exp(x);
    std::vector<double> p;
    for (double x : z) p.push_back(std::exp(x) / sum);
    return p;
  };
  const auto p = softmax(z1), q = softmax(z2);
  double want = 0, entropy = 0;
  for (size_t v = 0; v < p.size(); ++v) {
    want -= q[v] * std::log(p[v]) + p[v] * std::log(q[v]);
    entropy -= p[v] * std::log(p[v]);
  }
  CHECK(symmetric_cross_entropy(z1.data(), z2.data(), 4) == doctest::Approx(want).epsilon(1e-12));
  CHECK(symmetric_cross_entropy(z1.data(), z1.data(), 4) ==
        doctest::Approx(2 * entropy).epsilon(1e-12));
  CHECK(squared_difference(1.5, -0.5) == 4.0);
}

TEST_CASE("misalignment: SCE = symmetric KL + H(p) + H(q), exactly, on random distributions") {
  Rng rng(71);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 9;
    std::vector<double> z1(n), z2(n);
    for (int v = 0; v < n; ++v) {
      z1[v] = 3 * rng.normal();
      z2[v] = trial % 5 == 0 ? z1[v] : 3 * rng.normal();  // every fifth: p = q
    }
    const AlignmentParts a = logit_alignment_parts(z1.data(), z2.data(), n);
    std::vector<double> p(n), q(n);
    double sp = 0, sq = 0;
    for (int v = 0; v < n; ++v) {
      sp += p[v] = std::exp(z1[v]);
      sq += q[v] = std::exp(z2[v]);
    }
    double sce = 0, kl = 0, h = 0;
    for (int v = 0; v < n; ++v) {
      p[v] /= sp;
      q[v] /= sq;
    }
    for (int v = 0; v < n; ++v) {
      sce -= q[v] * std::log(p[v]) + p[v] * std::log(q[v]);
      kl += p[v] * std::log(p[v] / q[v]) + q[v] * std::log(q[v] / p[v]);
      h -= p[v] * std::log(p[v]) + q[v] * std::log(q[v]);
    }
    CHECK(a.sce == doctest::Approx(sce).epsilon(1e-12));
    CHECK(a.divergence == doctest::Approx(kl).epsilon(1e-12));
    CHECK(a.entropy == doctest::Approx(h).epsilon(1e-12));
    CHECK(std::abs(a.sce - a.divergence - a.entropy) <= 1e-12 * std::max(1.0, a.sce));
    CHECK(a.divergence >= -1e-15);
    if (trial % 5 == 0) CHECK(a.divergence == 0.0);
  }
  // Probability 0 on both sides adds nothing; on one side only, the divergence is infinite.
  const double zero = -INFINITY;
  const std::vector<double> lp = {std::log(0.25), std::log(0.75), zero},
                            lq = {std::log(0.5), std::log(0.5), zero},
                            lr = {zero, std::log(0.5), std::log(0.5)};
  const AlignmentParts both = alignment_parts(lp.data(), lq.data(), 3);
  CHECK(std::isfinite(both.sce));
  CHECK(both.sce == doctest::Approx(both.divergence + both.entropy).epsilon(1e-12));
  CHECK(alignment_parts(lp.data(), lr.data(), 3).divergence == INFINITY);
}

TEST_CASE(
    "misalignment: fed the chain's true distributions, SCE is 2 x their entropy, divergence 0") {
  for (int order : {1, 2, 3}) {
    TrainSpec spec;
    spec.task = "markov";
    spec.token.n_symbols = 4;
    spec.token.markov_order = order;
    spec.l_train = 8;  // views of 4..8 symbols: at least `order`
    spec.eval_samples = 300;
    const ResolvedSpec r = resolve(spec);
    const MarkovChain& chain = *r.chain;
    const MisalignmentViews v = misalignment_views(r, spec);
    const AlignmentParts perfect = perfect_misalignment(chain, v);
    // The chain's conditional entropy at each pair's context, from the table itself.
    double want = 0;
    for (int s = 0; s < v.first.n_seq(); ++s) {
      const int end = v.first.offsets[s + 1];
      const double* probs = chain.probs(chain.context_index(v.first.tokens.data() + end - order));
      double h = 0;
      for (int x = 0; x < chain.n_symbols(); ++x) h -= probs[x] * std::log(probs[x]);
      want += v.weights[s] * 2 * h;
    }
    CAPTURE(order);
    CHECK(perfect.sce == doctest::Approx(want).epsilon(1e-12));
    CHECK(perfect.entropy == doctest::Approx(want).epsilon(1e-12));
    CHECK(perfect.divergence == 0.0);
    CHECK(want > 0);
  }
  // A view shorter than the order has no context yet: its perfect prediction is uniform, unlike
  // the other view's, so even a perfect model is misaligned there.
  TrainSpec spec;
  spec.task = "markov";
  spec.token.n_symbols = 4;
  spec.token.markov_order = 3;
  spec.l_train = 4;  // views of 2..4 symbols
  spec.eval_samples = 300;
  const ResolvedSpec r = resolve(spec);
  const AlignmentParts short_views = perfect_misalignment(*r.chain, misalignment_views(r, spec));
  CHECK(short_views.divergence > 0);
}

TEST_CASE("misalignment: each view is a suffix of its sequence in the paper's length range") {
  for (const char* task : {"length", "markov"}) {
    TrainSpec spec;
    spec.task = task;
    spec.l_train = 9;
    spec.eval_samples = 50;
    const ResolvedSpec r = resolve(spec);
    const MisalignmentViews v = misalignment_views(r, spec);
    CHECK(v.l_lo == 5);
    CHECK(v.l_hi == 9);
    const bool token = is_token_task(r.task);
    const Batch set =
        token ? token_eval_batch(r.task, spec.token, r.chain.get(), 9, 50, spec.eval_seed)
              : eval_batch(r.task, 9, 50, spec.eval_seed);
    REQUIRE(v.first.n_seq() == set.n_seq());
    double total = 0;
    for (double w : v.weights) total += w;
    CHECK(total == doctest::Approx(1.0));
    for (const Batch* view : {&v.first, &v.second})
      for (int s = 0; s < set.n_seq(); ++s) {
        const int l = view->seq_len(s) - (token ? 1 : 2);  // content symbols
        CHECK(l >= 5);
        CHECK(l <= 9);
        // The view's content is the sequence's last l symbols.
        const int32_t* seq_end = set.tokens.data() + set.offsets[s] + 1 + 9;
        const int32_t* view_content = view->tokens.data() + view->offsets[s] + 1;
        CHECK(std::equal(view_content, view_content + l, seq_end - l));
      }
    CHECK_FALSE(has_misalignment(TaskKind::kCopy));
  }
}

TEST_CASE("misalignment: identical views give 0 (scalar) or 2H (markov), K models as one each") {
  TrainSpec a;
  a.task = "length";
  a.l_train = 1;  // suffix lengths 1..1: the two views are the same sequence
  a.eval_samples = 20;
  const ResolvedSpec ra = resolve(a);
  Transformer<float> one(ra.model);
  one.init(5);
  const auto m = misalignment(one, {&ra}, {&a}, {false});
  REQUIRE(m[0]);
  CHECK(m[0]->value == 0.0);

  TrainSpec b = a;
  b.task = "sum";
  b.l_train = 6;
  const ResolvedSpec rb = resolve(b);
  Transformer<float> two(rb.model, 2), single(rb.model);
  two.init(0, 5);
  two.init(1, 6);
  single.init(6);
  const auto both = misalignment(two, {&ra, &rb}, {&a, &b}, {false, false});
  const auto alone = misalignment(single, {&rb}, {&b}, {false});
  REQUIRE(both[1]);
  CHECK(both[0]->value == 0.0);
  CHECK(both[1]->value > 0.0);
  CHECK(both[1]->value == doctest::Approx(alone[0]->value).epsilon(1e-6));
  CHECK_FALSE(misalignment(single, {&rb}, {&b}, {true})[0]);  // a diverged run has none

  TrainSpec c;
  c.task = "markov";
  c.l_train = 1;
  c.eval_samples = 10;
  const ResolvedSpec rc = resolve(c);
  Transformer<float> lm(rc.model);
  lm.init(2);
  const auto mc = misalignment(lm, {&rc}, {&c}, {false});
  REQUIRE(mc[0]);
  // At l_train = 1 both views are [BOS, x_1]: the SCE of a distribution with itself, 2H(p), which
  // for a near-uniform untrained model is close to 2·log V.
  const double two_log_v = 2 * std::log(static_cast<double>(rc.model.vocab_size));
  CHECK(mc[0]->value > 0.9 * two_log_v);
  CHECK(mc[0]->value <= two_log_v + 1e-9);
  // All of it is the entropy part: identical outputs do not diverge. The scalar tasks have no
  // parts.
  REQUIRE(mc[0]->parts);
  CHECK(mc[0]->parts->sce == mc[0]->value);
  CHECK(mc[0]->parts->divergence == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(mc[0]->parts->entropy == doctest::Approx(mc[0]->value).epsilon(1e-12));
  // A perfect model predicts the first symbol's distribution (uniform over the 16 symbols) twice.
  REQUIRE(mc[0]->perfect);
  CHECK(mc[0]->perfect->sce == doctest::Approx(2 * std::log(16.0)).epsilon(1e-12));
  CHECK_FALSE(m[0]->parts);
  CHECK_FALSE(m[0]->perfect);
}
