// The long-short misalignment metric (train/misalignment.hpp): the divergence against its
// formula, the views against the sequences they come from, identical views, and K models at once
// against one at a time.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "models/backend.hpp"
#include "models/model.hpp"
#include "train/misalignment.hpp"
#include "train/train_spec.hpp"

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
}
