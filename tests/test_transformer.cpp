// The whole model (models/model.hpp) on the CPU: gradient checks per positional encoding and per
// step-input option (windows, distance caps, temperature, both heads with row weights), the
// inference path against the training forward, K models at once against K single models,
// causality and position properties.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gradcheck.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "small_model.hpp"
#include "test_support.hpp"

using namespace lenlab;
using lenlab::test::check_gradient;
using lenlab::test::small_config;
using DModel = Model<CpuBackend<double>>;
using DPacked = PackedBatch<CpuBackend<double>>;

namespace {

// [BOS, bits..., EOS] for each bit string, packed; the scalar head reads each EOS.
Batch make_batch(const std::vector<std::vector<int>>& seqs) {
  Batch b;
  for (const auto& bits : seqs) {
    std::vector<int32_t> tokens = {kBos};
    for (int x : bits) tokens.push_back(x);
    tokens.push_back(kEos);
    append_sequence(b, tokens, static_cast<double>(bits.size()) * 0.3);
  }
  return b;
}

// The token head reads every row, predicting the next token (the last row predicts EOS), with
// weights that differ per row; the scalar head keeps its EOS rows.
Batch with_token_readout(Batch b) {
  for (int s = 0; s < b.n_seq(); ++s)
    for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t) {
      b.token.rows.push_back(t);
      b.token.labels.push_back(t + 1 < b.offsets[s + 1] ? b.tokens[t + 1] : kEos);
      b.token.weights.push_back(0.1 + 0.05 * (t % 3));
    }
  return b;
}

const std::vector<PositionalEncoding> kAllPe = {
    PositionalEncoding::kNope, PositionalEncoding::kLearned, PositionalEncoding::kAlibi,
    PositionalEncoding::kRope, PositionalEncoding::kT5,      PositionalEncoding::kKerple,
    PositionalEncoding::kFire, PositionalEncoding::kBias};
// The encodings of relative distance (a cap applies; outputs do not move with a shift).
const std::vector<PositionalEncoding> kRelativePe = {
    PositionalEncoding::kAlibi,  PositionalEncoding::kRope, PositionalEncoding::kT5,
    PositionalEncoding::kKerple, PositionalEncoding::kFire, PositionalEncoding::kBias};

// The batch's total loss (MSE on the scalar head + cross-entropy on the token head + the token
// rows' pair loss) after a forward; with grad, also its gradients into the model's grads().
double loss_of(DModel& m, const Batch& batch, bool grad) {
  DPacked in;
  in.pack({&batch}, m.config());
  m.forward(in);
  const int R = in.n_scalar, R2 = in.n_token, V = m.config().vocab_size;
  std::vector<double> targets(batch.targets), dz(R), dlogits(static_cast<size_t>(R2) * V);
  double mse = 0, ce = 0;
  if (R > 0)
    cpu::mse_loss(dz.data(), &mse, m.scalar_out(), targets.data(), in.scalar_weights.data(), R);
  if (R2 > 0)
    cpu::cross_entropy_loss(dlogits.data(), &ce, m.token_logits(), in.token_labels.data(),
                            in.token_weights.data(), R2, V);
  double sce = 0;  // the misalignment pairs' loss, added into dlogits
  if (in.n_pairs > 0)
    cpu::pair_alignment_loss(dlogits.data(), &sce, m.token_logits(), in.pair_first.data(),
                             in.pair_second.data(), in.pair_weights.data(),
                             in.pair_entropy_weights.data(), in.n_pairs, R2, V);
  if (grad) {
    m.zero_grad();
    m.backward(in, R > 0 ? dz.data() : nullptr, R2 > 0 ? dlogits.data() : nullptr);
  }
  return mse + ce + sce;
}

void check_model_gradient(const std::string& what, const ModelConfig& c, const Batch& batch) {
  DModel model(c);
  model.init(42);
  // Larger weights than the 0.02 init, so every path (attention included) carries gradient.
  Rng rng(3);
  std::vector<double> p = model.parameters(0);
  for (double& x : p) x += 0.3 * rng.normal();
  model.set_parameters(0, p.data());
  loss_of(model, batch, true);
  const std::vector<double> analytic = model.gradients(0);
  std::vector<double> params = model.parameters(0);
  auto loss = [&] {
    model.set_parameters(0, params.data());
    return loss_of(model, batch, false);
  };
  check_gradient(what, params, analytic, loss);
}

// The initialisation plus noise: a learned bias starts at 0 (t5) and would show nothing.
void init_perturbed(DModel& model, uint64_t seed) {
  model.init(seed);
  std::vector<double> p = model.parameters(0);
  Rng rng(seed + 100);
  for (double& x : p) x += 0.3 * rng.normal();
  model.set_parameters(0, p.data());
}

// Scalar outputs [R] of one batch, through the training forward or the inference path.
std::vector<double> outputs(DModel& m, const Batch& b, bool infer) {
  DPacked in;
  in.pack({&b}, m.config());
  infer ? m.infer(in) : m.forward(in);
  return m.download_scalar_out(in);
}

}  // namespace

TEST_CASE("whole-model gradient matches finite differences for every positional encoding") {
  const Batch batch = make_batch({{1}, {0, 1, 1, 0}, {1, 1, 0, 1, 0, 0, 1}});
  for (PositionalEncoding pe : kAllPe)
    check_model_gradient("model " + positional_encoding_name(pe), small_config(pe), batch);
  ModelConfig per_layer = small_config(PositionalEncoding::kT5);
  per_layer.t5_per_layer = true;
  check_model_gradient("model t5, a bucket table per layer", per_layer, batch);
}

namespace {

ModelConfig with_token_head(ModelConfig c) {
  c.token_head = true;
  return c;
}

// VCL's prefix (train/vcl.hpp) of `batch` at offset 3: rows 0..2 of each sequence have loss weight
// 0 (α = 0); random marks rows 1..2 as noise and the rest as its statistics.
Batch vcl_prefix_batch(const std::string& kind) {
  Batch b = with_token_readout(make_batch({{1, 0, 1, 1}, {0, 1, 1, 0, 1, 0, 0}, {1, 1, 0}}));
  constexpr int kOffset = 3;
  for (int r = 0; r < b.token.size(); ++r) {
    const int s = b.token.rows[r] < b.offsets[1] ? 0 : b.token.rows[r] < b.offsets[2] ? 1 : 2;
    if (b.token.rows[r] - b.offsets[s] < kOffset) b.token.weights[r] = 0.0;
  }
  std::vector<int32_t>& rows = kind == "detach" ? b.detached : b.prefix_noise;
  if (kind == "mask") return b;
  rows.assign(b.n_tokens(), 0);
  for (int s = 0; s < b.n_seq(); ++s)
    for (int i = 0; i < b.seq_len(s); ++i)
      rows[b.offsets[s] + i] = kind == "detach" ? (i < kOffset ? 1 : 0)
                               : i == 0         ? int{ops::kPassRow}
                               : i < kOffset    ? int{ops::kNoiseRow}
                                                : int{ops::kStatsRow};
  b.noise_seed = 11;
  return b;
}

}  // namespace

TEST_CASE("VCL's random prefix: whole-model gradient matches finite differences") {
  const Batch batch = vcl_prefix_batch("random");
  for (PositionalEncoding pe : {PositionalEncoding::kNope, PositionalEncoding::kLearned,
                                PositionalEncoding::kRope, PositionalEncoding::kAlibi})
    check_model_gradient("model " + positional_encoding_name(pe) + ", random prefix",
                         with_token_head(small_config(pe)), batch);
  // The noise changes the loss (the rows after the prefix read it).
  DModel model(with_token_head(small_config(PositionalEncoding::kNope)));
  init_perturbed(model, 4);
  CHECK(loss_of(model, batch, false) != loss_of(model, vcl_prefix_batch("mask"), false));
}

TEST_CASE("VCL's detached prefix: mask's loss to the bit, and no gradient reaches a prefix row") {
  for (PositionalEncoding pe : {PositionalEncoding::kLearned, PositionalEncoding::kFire}) {
    INFO(positional_encoding_name(pe));
    const ModelConfig c = with_token_head(small_config(pe));
    DModel model(c);
    init_perturbed(model, 5);
    const double mask_loss = loss_of(model, vcl_prefix_batch("mask"), true);
    const std::vector<double> mask = model.gradients(0);
    const double detach_loss = loss_of(model, vcl_prefix_batch("detach"), true);
    const std::vector<double> detach = model.gradients(0);
    CHECK(detach_loss == mask_loss);
    int differ = 0;
    for (size_t i = 0; i < mask.size(); ++i) differ += mask[i] != detach[i];
    CHECK(differ > 0);
    if (pe != PositionalEncoding::kLearned) continue;
    // Positions 0..2 sit in prefix rows only: under detach no gradient reaches them, while mask
    // trains them through the later rows' attention.
    const size_t wpe = model.weights().wpe - model.params();
    double mask_prefix = 0;
    for (size_t i = wpe; i < wpe + 3 * static_cast<size_t>(c.d_model); ++i) {
      CHECK(detach[i] == 0.0);
      mask_prefix += std::abs(mask[i]);
    }
    CHECK(mask_prefix > 0.0);
  }
}

TEST_CASE("learned biases: K models side by side give each model its own table and gradient") {
  for (PositionalEncoding pe :
       {PositionalEncoding::kT5, PositionalEncoding::kKerple, PositionalEncoding::kFire}) {
    const ModelConfig c = small_config(pe);
    const Batch batch = make_batch({{1, 0, 1}, {0, 1, 1, 0, 1, 1}});
    DModel pair(c, 2);
    std::vector<std::vector<double>> alone_grads;
    for (int k = 0; k < 2; ++k) {
      DModel one(c);
      one.init(10 + k);
      std::vector<double> p = one.parameters(0);
      Rng rng(20 + k);
      for (double& x : p) x += 0.3 * rng.normal();  // the bias tables differ between the models
      one.set_parameters(0, p.data());
      pair.set_parameters(k, p.data());
      loss_of(one, batch, true);
      alone_grads.push_back(one.gradients(0));
    }
    // The same loss per model: MSE of each model's outputs against the batch's targets.
    DPacked in;
    in.pack({&batch, &batch}, c);
    pair.forward(in);
    const int R = in.n_scalar;
    std::vector<double> targets = batch.targets, dz(2 * R);
    targets.insert(targets.end(), batch.targets.begin(), batch.targets.end());
    double mse = 0;
    cpu::mse_loss(dz.data(), &mse, pair.scalar_out(), targets.data(), in.scalar_weights.data(),
                  2 * R);
    pair.zero_grad();
    pair.backward(in, dz.data(), nullptr);
    for (int k = 0; k < 2; ++k) {
      const std::vector<double> g = pair.gradients(k);
      double worst = 0;
      for (size_t i = 0; i < g.size(); ++i)
        worst = std::max(worst, std::abs(g[i] - alone_grads[k][i]));
      CHECK_MESSAGE(worst < 1e-12, positional_encoding_name(pe)
                                       << " model " << k << ": gradients differ by " << worst);
    }
  }
}

TEST_CASE(
    "whole-model gradient with each step-input option: windows, caps, temperature, both "
    "heads with row weights, other positions") {
  struct Row {
    std::string name;
    PositionalEncoding pe;
    std::function<void(Batch&)> edit;
    bool token_head = false;
  };
  const std::vector<Row> rows = {
      {"alibi, Λ-window (2 global, 3 local)", PositionalEncoding::kAlibi,
       [](Batch& b) { b.attention.n_global = 2, b.attention.n_local = 3; }},
      {"alibi, distance cap 2", PositionalEncoding::kAlibi,
       [](Batch& b) { b.attention.max_distance = 2; }},
      {"t5, distance cap 2", PositionalEncoding::kT5,
       [](Batch& b) { b.attention.max_distance = 2; }},
      {"kerple, Λ-window (1 global, 2 local)", PositionalEncoding::kKerple,
       [](Batch& b) { b.attention.n_global = 1, b.attention.n_local = 2; }},
      {"fire, distance cap 2 and a Λ-window", PositionalEncoding::kFire,
       [](Batch& b) {
         b.attention.max_distance = 2;
         b.attention.n_global = 1, b.attention.n_local = 3;
       }},
      {"fire, randomized positions", PositionalEncoding::kFire,
       [](Batch& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 2 * (t - b.offsets[s]) + s;
       }},
      {"kerple, randomized positions", PositionalEncoding::kKerple,
       [](Batch& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 3 * (t - b.offsets[s]) + s;
       }},
      {"t5, token head on every row", PositionalEncoding::kT5,
       [](Batch& b) { b = with_token_readout(b); }, true},
      {"rope, distance cap 3 (RoPE inside attention)", PositionalEncoding::kRope,
       [](Batch& b) { b.attention.max_distance = 3; }},
      {"rope, window and cap", PositionalEncoding::kRope,
       [](Batch& b) {
         b.attention.n_global = 1, b.attention.n_local = 2, b.attention.max_distance = 4;
       }},
      {"nope, temperature per length", PositionalEncoding::kNope,
       [](Batch& b) { b.attention.logit_scale_by_length = {1.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5}; }},
      {"learned, randomized positions", PositionalEncoding::kLearned,
       [](Batch& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 2 * (t - b.offsets[s]) + (s % 2);
       }},
      {"rope, token head on every row and scalar head", PositionalEncoding::kRope,
       [](Batch& b) { b = with_token_readout(b); }, true},
      {"alibi, token head with symmetric cross-entropy pairs across sequences",
       PositionalEncoding::kAlibi,
       [](Batch& b) {
         b = with_token_readout(b);  // rows 0..3, 4..9, 10..16 are the sequences' readouts
         b.token.labels[9] = -1;     // a row read for its pair only
         b.token.pairs = {{3, 9, 12}, {8, 16, 1}, {0.7, 0.4, 0.9}, {0.7, 0.4, 0.9}};
       },
       true},
      {"rope, token head with symmetric KL pairs (no entropy terms) across sequences",
       PositionalEncoding::kRope,
       [](Batch& b) {
         b = with_token_readout(b);
         b.token.labels[9] = -1;
         b.token.pairs = {{3, 9, 12}, {8, 16, 1}, {0.7, 0.4, 0.9}, {0.0, 0.0, 0.0}};
       },
       true},
  };
  for (const Row& r : rows) {
    Batch batch = make_batch({{1, 0}, {0, 1, 1, 0}, {1, 1, 0, 1, 0}});
    r.edit(batch);
    ModelConfig c = small_config(r.pe);
    c.max_positions = 14;
    c.token_head = r.token_head;
    check_model_gradient(r.name, c, batch);
  }
}

TEST_CASE("the inference path gives the training forward's outputs, with and without options") {
  for (PositionalEncoding pe : kAllPe) {
    DModel model(small_config(pe));
    model.init(9);
    Batch b = make_batch({{1, 0, 1}, {0}, {1, 1, 0, 1, 0, 0, 1, 1}});
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 1) b.attention.n_local = 3, b.attention.max_distance = 2;
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
      Batch b = variant % 2 ? every_other : all;
      if (variant >= 2) b.attention.n_local = 4, b.attention.n_global = 1;
      INFO(positional_encoding_name(pe) << ", variant " << variant);
      DPacked in;
      in.pack({&b}, c);
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
    Batch b = make_batch({{0, 1, 1, 0, 1, 1}});
    const double plain = outputs(model, b, true)[0];
    b.attention.max_distance = 7;  // 8 tokens: distances up to 7
    CHECK(outputs(model, b, true)[0] == doctest::Approx(plain).epsilon(1e-12));
    b.attention.max_distance = 2;
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
  CHECK_THROWS_WITH_AS(parse_positional_encoding("sinusoid"),
                       doctest::Contains("'nope', 'learned', 'alibi', 'rope', 't5', 'kerple', "
                                         "'fire' or 'bias'"),
                       UsageError);
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
  for (RopeScalingKind kind :
       {RopeScalingKind::kPi, RopeScalingKind::kNtk, RopeScalingKind::kYarn}) {
    CAPTURE(rope_scaling_name(kind));
    const RopeScaling scaling{kind, 2.5, 4};
    ModelConfig c = small_config(PositionalEncoding::kRope);
    c.rope_scaling = scaling;
    DModel trained(c);
    init_perturbed(trained, 8);
    Batch named = plain;
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
                               RopeScalingKind::kDynamicNtk}) {
    CAPTURE(rope_scaling_name(kind));
    Batch b = plain;
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
  Batch spread = plain;
  for (int32_t& p : spread.positions) p *= 2;
  spread.attention.rope = {RopeScalingKind::kPi, 2.0, 8};
  CHECK(outputs(model, spread, true) == want);
  // ... and a cap makes attention apply RoPE by distance: the same angles there.
  Batch capped = plain, capped_spread = spread;
  capped.attention.max_distance = 3;
  capped_spread.attention.max_distance = 6;
  CHECK(outputs(model, capped_spread, true) == outputs(model, capped, true));
}
