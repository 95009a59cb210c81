// The whole model: gradient check per positional encoding, causality, position properties.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "gradcheck.hpp"
#include "models/loss.hpp"
#include "models/transformer.hpp"

using namespace lenlab;
using lenlab::test::check_gradient;

namespace {

// [BOS, bits..., EOS] for each bit string, packed.
Batch make_batch(const std::vector<std::vector<int>>& seqs) {
  Batch b;
  b.offsets.push_back(0);
  for (const auto& bits : seqs) {
    b.tokens.push_back(kBos);
    for (int x : bits) b.tokens.push_back(x);
    b.tokens.push_back(kEos);
    b.offsets.push_back(b.n_tokens());
    b.targets.push_back(static_cast<double>(bits.size()) * 0.3);
  }
  return b;
}

ModelConfig small_config(PositionalEncoding pe) {
  ModelConfig c;
  c.n_layer = 2;
  c.d_model = 8;
  c.n_head = 2;
  c.d_ff = 12;
  c.pe = pe;
  c.max_positions = 12;
  return c;
}

const std::vector<PositionalEncoding> kAllPe = {
    PositionalEncoding::kNope, PositionalEncoding::kLearned, PositionalEncoding::kAlibi,
    PositionalEncoding::kRope};

// Last-layer residual rows of a single-sequence batch.
std::vector<double> final_states(Transformer<double>& m, const Batch& b) {
  m.forward(b);
  const auto& a = m.activations();
  const size_t n = static_cast<size_t>(b.n_tokens()) * m.config().d_model;
  const size_t start = static_cast<size_t>(m.config().n_layer - 1) * n;
  return {a.resid_out.begin() + start, a.resid_out.begin() + start + n};
}

}  // namespace

TEST_CASE("whole-model gradient matches finite differences for every positional encoding") {
  const Batch batch = make_batch({{1}, {0, 1, 1, 0}, {1, 1, 0, 1, 0, 0, 1}});
  for (PositionalEncoding pe : kAllPe) {
    Transformer<double> model(small_config(pe));
    model.init(42);
    // Larger weights than the 0.02 init, so every path (attention included) carries gradient.
    Rng rng(3);
    for (double& p : model.params()) p += 0.3 * rng.normal();
    auto loss = [&] {
      const auto& pred = model.forward(batch);
      return mse_loss(pred.data(), batch.targets, batch.weights, static_cast<double*>(nullptr));
    };
    const auto& pred = model.forward(batch);
    std::vector<double> dpred(batch.n_seq());
    mse_loss(pred.data(), batch.targets, batch.weights, dpred.data());
    model.zero_grad();
    model.backward(batch, dpred.data());
    const std::vector<double> analytic(model.grads().begin(), model.grads().end());
    check_gradient("model " + positional_encoding_name(pe), model.params(), analytic, loss);
  }
}

TEST_CASE("changing a later token never changes an earlier position's state") {
  for (PositionalEncoding pe : kAllPe) {
    Transformer<double> model(small_config(pe));
    model.init(7);
    const std::vector<int> bits = {1, 0, 1, 1, 0, 1, 0, 0};
    const auto base = final_states(model, make_batch({bits}));
    const int d = model.config().d_model;
    for (size_t k = 0; k < bits.size(); ++k) {
      auto flipped = bits;
      flipped[k] ^= 1;
      const auto other = final_states(model, make_batch({flipped}));
      const size_t token = k + 1;  // bit k sits after BOS
      for (size_t i = 0; i < token * d; ++i) REQUIRE(other[i] == base[i]);
      bool later_changed = false;
      for (size_t i = token * d; i < other.size(); ++i) later_changed |= other[i] != base[i];
      CHECK(later_changed);
    }
  }
}

TEST_CASE("a one-layer NoPE model's output ignores the order of the bits, RoPE's does not") {
  auto output = [](PositionalEncoding pe, const std::vector<int>& bits) {
    ModelConfig c = small_config(pe);
    c.n_layer = 1;
    Transformer<double> model(c);
    model.init(11);
    for (double& p : model.params()) p *= 3;  // make position effects visible
    return model.forward(make_batch({bits}))[0];
  };
  const std::vector<int> a = {1, 1, 0, 0, 0}, b = {0, 0, 1, 0, 1};
  CHECK(output(PositionalEncoding::kNope, a) ==
        doctest::Approx(output(PositionalEncoding::kNope, b)).epsilon(1e-12));
  CHECK(output(PositionalEncoding::kRope, a) !=
        doctest::Approx(output(PositionalEncoding::kRope, b)).epsilon(1e-9));
  CHECK(output(PositionalEncoding::kAlibi, a) !=
        doctest::Approx(output(PositionalEncoding::kAlibi, b)).epsilon(1e-9));
}

TEST_CASE(
    "ALiBi and RoPE see only relative positions: a model's states on a sequence do not change "
    "when the same sequence is evaluated inside a larger batch at a different offset") {
  for (PositionalEncoding pe : {PositionalEncoding::kAlibi, PositionalEncoding::kRope}) {
    Transformer<double> model(small_config(pe));
    model.init(5);
    const std::vector<int> bits = {0, 1, 1, 0, 1};
    const double alone = model.forward(make_batch({bits}))[0];
    const double packed = model.forward(make_batch({{1, 1, 1}, bits}))[1];
    CHECK(alone == doctest::Approx(packed).epsilon(1e-14));
  }
}

TEST_CASE("learned positions refuse sequences longer than their table") {
  ModelConfig c = small_config(PositionalEncoding::kLearned);
  c.max_positions = 6;  // lengths up to 4
  Transformer<double> model(c);
  model.init(1);
  CHECK_NOTHROW(model.forward(make_batch({{1, 0, 1, 1}})));
  CHECK_THROWS_WITH_AS(model.forward(make_batch({{1, 0, 1, 1, 0}})),
                       doctest::Contains("longer than the learned position table"), UsageError);
}

TEST_CASE("bad model shapes are refused with the bad value named") {
  ModelConfig c;
  c.d_model = 60;
  c.n_head = 8;
  CHECK_THROWS_WITH_AS(Transformer<float>{c},
                       doctest::Contains("--d-model 60 is not divisible by --n-head 8"),
                       UsageError);
  c = ModelConfig{};
  c.n_layer = 0;
  CHECK_THROWS_WITH_AS(Transformer<float>{c}, doctest::Contains("--n-layer"), UsageError);
  CHECK_THROWS_WITH_AS(parse_positional_encoding("sinusoid"),
                       doctest::Contains("'nope', 'learned', 'alibi' or 'rope'"), UsageError);
}

TEST_CASE("initialisation is deterministic in the seed") {
  ModelConfig c = small_config(PositionalEncoding::kRope);
  Transformer<float> a(c), b(c), other(c);
  a.init(3);
  b.init(3);
  other.init(4);
  CHECK(a.params() == b.params());
  CHECK(a.params() != other.params());
}
