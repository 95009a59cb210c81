// The whole model (models/model.hpp) on the CPU, its properties: the inference path against the
// training forward, K models at once against K single models, causality, what positions change,
// distance caps, refused shapes, RoPE's extensions (gradient checks: test_transformer.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/positional_encodings.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/whole_model.hpp"

using namespace lenlab;
using namespace lenlab::test;

TEST_CASE("the inference path gives the training forward's outputs, with and without options") {
  for (PositionalEncoding pe : kAllPe) {
    DModel model(small_config(pe));
    model.init(9);
    Step b = make_batch({{1, 0, 1}, {0}, {1, 1, 0, 1, 0, 0, 1, 1}});
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 1) b.attention.window.n_local = 3, b.attention.window.max_distance = 2;
      const auto train = outputs(model, b, false), infer = outputs(model, b, true);
      REQUIRE(train.size() == infer.size());
      for (size_t i = 0; i < train.size(); ++i)
        CHECK(infer[i] == doctest::Approx(train[i]).epsilon(1e-13));
    }
  }
}

TEST_CASE("K models at once give each model's own outputs and gradients") {
  const ModelConfig c = small_config(PositionalEncoding::kRope);
  const std::vector<Batch> batches = {make_batch({{1, 0, 1}, {0, 1}}), make_batch({{1}}),
                                      make_batch({{0, 0, 1, 1, 0}, {1, 1}, {0}})};
  DModel many(c, 3);
  std::vector<std::vector<double>> want_out, want_grad;
  for (int k = 0; k < 3; ++k) {
    many.init(k, 10 + k);
    DModel one(c);
    one.init(10 + k);
    loss_of(one, batches[k], true);
    want_out.push_back(one.download_scalar_out([&] {
      DPacked p;
      p.pack({&batches[k]}, c);
      return p;
    }()));
    want_grad.push_back(one.gradients(0));
  }
  DPacked in;
  in.pack({&batches[0], &batches[1], &batches[2]}, c);
  many.forward(in);
  const auto out = many.download_scalar_out(in);
  std::vector<double> targets(3 * in.n_scalar, 0.0), dz(3 * in.n_scalar);
  for (int k = 0; k < 3; ++k)
    for (int r = 0; r < batches[k].n_read(); ++r)
      targets[k * in.n_scalar + r] = batches[k].targets[r];
  double loss[3];
  cpu::mse_loss(dz.data(), loss, many.scalar_out(), targets.data(), in.scalar_weights.data(),
                in.n_scalar, many.models());
  many.zero_grad();
  many.backward(in, dz.data(), nullptr);
  for (int k = 0; k < 3; ++k) {
    for (int r = 0; r < batches[k].n_read(); ++r)
      CHECK(out[k * in.n_scalar + r] == doctest::Approx(want_out[k][r]).epsilon(1e-13));
    const auto g = many.gradients(k);
    double worst = 0;
    for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - want_grad[k][i]));
    CHECK(worst < 1e-13);
  }
}

TEST_CASE(
    "the inference path's token logits equal the training forward's: many rows of a sequence in "
    "tiles, a few one by one") {
  // Sequences of 22 and 11 tokens: their read rows go in tiles (at least 8 in one sequence); the
  // 3-token one's one row at a time. Every row, then every other row (11 of the first sequence's,
  // gathered from rows 2 apart).
  const Batch all =
      with_token_readout(make_batch({{1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0},
                                     {0},
                                     {1, 1, 0, 1, 0, 0, 1, 1, 0}}));
  Batch every_other = all;
  every_other.token = {};
  for (int r = 0; r < all.token.size(); r += 2) {
    every_other.token.rows.push_back(all.token.rows[r]);
    every_other.token.labels.push_back(all.token.labels[r]);
    every_other.token.weights.push_back(all.token.weights[r]);
  }
  for (PositionalEncoding pe : kAllPe)
    for (int variant = 0; variant < 4; ++variant) {
      ModelConfig c = small_config(pe);
      c.token_head = true;
      c.max_positions = 24;
      DModel model(c);
      model.init(5);
      Step b = variant % 2 ? every_other : all;
      if (variant >= 2) b.attention.window.n_local = 4, b.attention.window.n_global = 1;
      INFO(positional_encoding_name(pe) << ", variant " << variant);
      DPacked in;
      pack_step(in, b, c);
      model.forward(in);
      const std::vector<double> train = model.download_token_logits(in);
      model.infer(in);
      const std::vector<double> infer = model.download_token_logits(in);
      REQUIRE(train.size() == static_cast<size_t>(b.token.size()) * c.vocab_size);
      test::check_close_to_largest(infer, train, 1e-13);
    }
}

TEST_CASE("changing a later token never changes an earlier row's output") {
  for (PositionalEncoding pe : kAllPe) {
    ModelConfig c = small_config(pe);
    c.token_head = true;
    DModel model(c);
    model.init(7);
    const std::vector<int> bits = {1, 0, 1, 1, 0, 1, 0, 0};
    auto logits = [&](const std::vector<int>& x) {
      const Batch b = with_token_readout(make_batch({x}));
      DPacked in;
      in.pack({&b}, c);
      model.infer(in);
      std::vector<double> out(static_cast<size_t>(in.n_token) * c.vocab_size);
      std::copy_n(model.token_logits(), out.size(), out.begin());
      return out;
    };
    const auto base = logits(bits);
    const int V = c.vocab_size;
    for (size_t k = 0; k < bits.size(); ++k) {
      auto flipped = bits;
      flipped[k] ^= 1;
      const auto other = logits(flipped);
      const size_t token = k + 1;  // bit k sits after BOS
      for (size_t i = 0; i < token * V; ++i) REQUIRE(other[i] == base[i]);
      bool later_changed = false;
      for (size_t i = token * V; i < other.size(); ++i) later_changed |= other[i] != base[i];
      CHECK(later_changed);
    }
  }
}

TEST_CASE("a one-layer NoPE model's output ignores the order of the bits, RoPE's does not") {
  auto output = [](PositionalEncoding pe, const std::vector<int>& bits) {
    ModelConfig c = small_config(pe);
    c.n_layer = 1;
    DModel model(c);
    model.init(11);
    std::vector<double> p = model.parameters(0);
    for (double& x : p) x *= 3;  // make position effects visible
    model.set_parameters(0, p.data());
    return outputs(model, make_batch({bits}), false)[0];
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
    "the relative encodings see only relative positions: a sequence's output does not change "
    "inside a larger batch, nor when all its positions shift by the same amount (FIRE: it reads "
    "the query's position too, so a shift past its threshold moves it)") {
  for (PositionalEncoding pe : kRelativePe) {
    CAPTURE(positional_encoding_name(pe));
    DModel model(small_config(pe));
    init_perturbed(model, 5);
    const std::vector<int> bits = {0, 1, 1, 0, 1};
    const double alone = outputs(model, make_batch({bits}), false)[0];
    const double packed = outputs(model, make_batch({{1, 1, 1}, bits}), false)[1];
    CHECK(alone == doctest::Approx(packed).epsilon(1e-14));
    Batch shifted = make_batch({bits});
    for (int32_t& p : shifted.positions) p += 3;
    const double moved = outputs(model, shifted, false)[0];
    if (pe == PositionalEncoding::kFire)
      CHECK(alone != doctest::Approx(moved).epsilon(1e-9));
    else
      CHECK(alone == doctest::Approx(moved).epsilon(1e-12));
  }
}

TEST_CASE("a distance cap at or past the longest distance changes nothing, a shorter one does") {
  for (PositionalEncoding pe : kRelativePe) {
    CAPTURE(positional_encoding_name(pe));
    DModel model(small_config(pe));
    init_perturbed(model, 6);
    Step b = make_batch({{0, 1, 1, 0, 1, 1}});
    const double plain = outputs(model, b, true)[0];
    b.attention.window.max_distance = 7;  // 8 tokens: distances up to 7
    CHECK(outputs(model, b, true)[0] == doctest::Approx(plain).epsilon(1e-12));
    b.attention.window.max_distance = 2;
    CHECK(outputs(model, b, true)[0] != doctest::Approx(plain).epsilon(1e-9));
  }
}

TEST_CASE("learned positions refuse sequences longer than their table") {
  ModelConfig c = small_config(PositionalEncoding::kLearned);
  c.max_positions = 6;  // lengths up to 4
  DModel model(c);
  model.init(1);
  CHECK_NOTHROW(outputs(model, make_batch({{1, 0, 1, 1}}), false));
  CHECK_THROWS_WITH_AS(outputs(model, make_batch({{1, 0, 1, 1, 0}}), false),
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
  c = ModelConfig{};
  c.scalar_head = false;
  CHECK_THROWS_WITH_AS(Transformer<float>{c}, doctest::Contains("needs a head"), UsageError);
  // The error lists every row of the encodings' table (names, not a copy of them).
  REQUIRE(positional_encoding_names().size() >= 8);
  const std::string every_encoding = join_choices(positional_encoding_names());
  CHECK_THROWS_WITH_AS(parse_positional_encoding("rotary"),
                       doctest::Contains(every_encoding.c_str()), UsageError);
}

TEST_CASE(
    "initialisation is deterministic in the seed, and a head's parameters exist only with it") {
  ModelConfig c = small_config(PositionalEncoding::kRope);
  Transformer<float> a(c), b(c), other(c);
  a.init(3);
  b.init(3);
  other.init(4);
  CHECK(a.parameters(0) == b.parameters(0));
  CHECK(a.parameters(0) != other.parameters(0));
  // Adding the token head appends its tensors: every other tensor keeps its place and values.
  ModelConfig with_token = c;
  with_token.token_head = true;
  Transformer<float> t(with_token);
  t.init(3);
  const auto pa = a.parameters(0), pt = t.parameters(0);
  REQUIRE(pt.size() == pa.size() + static_cast<size_t>(c.d_model + 1) * c.vocab_size);
  CHECK(std::equal(pa.begin(), pa.end(), pt.begin()));
}

TEST_CASE("a RoPE model trained with an extension uses it where a batch names none") {
  // A model whose config carries a scaling (trained with it) gives, on a plain batch, exactly what
  // a plain model with the same weights gives on a batch that names that scaling: the same angle
  // tables, and YaRN's logit scale, in the forward, the backward and inference.
  const Batch plain = make_batch({{0, 1, 1, 0, 1, 1, 0, 0, 1}, {1, 0, 1}});
  DModel reference(small_config(PositionalEncoding::kRope));
  init_perturbed(reference, 8);
  for (RopeScalingKind kind : {RopeScalingKind::kPi, RopeScalingKind::kNtk, RopeScalingKind::kYarn,
                               RopeScalingKind::kYarnPaper}) {
    CAPTURE(rope_scaling_name(kind));
    const RopeScaling scaling{kind, 2.5, 4};
    ModelConfig c = small_config(PositionalEncoding::kRope);
    c.rope_scaling = scaling;
    DModel trained(c);
    init_perturbed(trained, 8);
    Step named = plain;
    named.attention.rope = scaling;
    for (bool infer : {false, true}) {
      CHECK(outputs(trained, plain, infer) == outputs(reference, named, infer));
      CHECK(outputs(trained, plain, infer) != outputs(reference, plain, infer));
    }
    CHECK(loss_of(trained, plain, true) == loss_of(reference, named, true));
    CHECK(trained.gradients(0) == reference.gradients(0));
  }
}

TEST_CASE("RoPE's context extensions: factor 1 is plain RoPE to the bit, PI halves positions") {
  DModel model(small_config(PositionalEncoding::kRope));
  init_perturbed(model, 8);
  const Batch plain = make_batch({{0, 1, 1, 0, 1, 1}, {1, 0, 1}});
  const std::vector<double> want = outputs(model, plain, true);
  const std::vector<double> want_forward = outputs(model, plain, false);
  for (RopeScalingKind kind : {RopeScalingKind::kPi, RopeScalingKind::kNtk, RopeScalingKind::kYarn,
                               RopeScalingKind::kYarnPaper, RopeScalingKind::kDynamicNtk}) {
    CAPTURE(rope_scaling_name(kind));
    Step b = plain;
    b.attention.rope = {kind, 1.0, 8};  // trained on 8 tokens: every sequence here fits
    CHECK(outputs(model, b, false) == want_forward);
    CHECK(outputs(model, b, true) == want);
    b.attention.rope_auto = kind != RopeScalingKind::kDynamicNtk;  // auto: 1 within the window
    CHECK(outputs(model, b, true) == want);
    b.attention.rope.factor = 2.0;
    b.attention.rope_auto = false;
    if (kind != RopeScalingKind::kDynamicNtk) CHECK(outputs(model, b, true) != want);
  }
  // PI with s = 2 on positions 0, 2, 4, … is plain RoPE on 0, 1, 2, … (angles (2p/2)·θ = p·θ).
  Step spread = plain;
  for (int32_t& p : spread.positions) p *= 2;
  spread.attention.rope = {RopeScalingKind::kPi, 2.0, 8};
  CHECK(outputs(model, spread, true) == want);
  // ... and a cap makes attention apply RoPE by distance: the same angles there.
  Step capped = plain, capped_spread = spread;
  capped.attention.window.max_distance = 3;
  capped_spread.attention.window.max_distance = 6;
  CHECK(outputs(model, capped_spread, true) == outputs(model, capped, true));
}
