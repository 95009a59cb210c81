// The whole model (models/model.hpp) on the CPU: gradient checks per positional encoding and per
// step-input option (windows, distance caps, temperature, both heads with row weights), VCL's
// prefixes, learned biases for K models (its properties: test_model_properties.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "tests/support/gradcheck.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/whole_model.hpp"

using namespace lenlab;
using lenlab::test::check_gradient;
using lenlab::test::small_config;
using namespace lenlab::test;

namespace {

void check_model_gradient(const std::string& what, const ModelConfig& c, const Step& batch) {
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

}  // namespace

TEST_CASE("whole-model gradient matches finite differences for every positional encoding") {
  const Batch batch = make_batch({{1}, {0, 1, 1, 0}, {1, 1, 0, 1, 0, 0, 1}});
  for (PositionalEncoding pe : kAllPe)
    check_model_gradient("model " + positional_encoding_name(pe), small_config(pe), batch);
  ModelConfig per_layer = small_config(PositionalEncoding::kT5);
  per_layer.t5_per_layer = true;
  check_model_gradient("model t5, a bucket table per layer", per_layer, batch);
  // The token embedding times √d_model (Vaswani et al. §3.4) beside a fixed and a learned table.
  for (const PositionalEncoding pe :
       {PositionalEncoding::kSinusoidal, PositionalEncoding::kLearned}) {
    ModelConfig scaled = small_config(pe);
    scaled.embedding_scale = std::sqrt(static_cast<double>(scaled.d_model));
    check_model_gradient(
        "model " + positional_encoding_name(pe) + ", token embedding times sqrt(d)", scaled, batch);
  }
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
    std::function<void(Step&)> edit;
    bool token_head = false;
  };
  const std::vector<Row> rows = {
      {"alibi, Λ-window (2 global, 3 local)", PositionalEncoding::kAlibi,
       [](Step& b) { b.attention.window.n_global = 2, b.attention.window.n_local = 3; }},
      {"alibi, distance cap 2", PositionalEncoding::kAlibi,
       [](Step& b) { b.attention.window.max_distance = 2; }},
      {"t5, distance cap 2", PositionalEncoding::kT5,
       [](Step& b) { b.attention.window.max_distance = 2; }},
      {"kerple, Λ-window (1 global, 2 local)", PositionalEncoding::kKerple,
       [](Step& b) { b.attention.window.n_global = 1, b.attention.window.n_local = 2; }},
      {"fire, distance cap 2 and a Λ-window", PositionalEncoding::kFire,
       [](Step& b) {
         b.attention.window.max_distance = 2;
         b.attention.window.n_global = 1, b.attention.window.n_local = 3;
       }},
      {"fire, randomized positions", PositionalEncoding::kFire,
       [](Step& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 2 * (t - b.offsets[s]) + s;
       }},
      {"kerple, randomized positions", PositionalEncoding::kKerple,
       [](Step& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 3 * (t - b.offsets[s]) + s;
       }},
      {"t5, token head on every row", PositionalEncoding::kT5,
       [](Step& b) { b = with_token_readout(b); }, true},
      {"rope, distance cap 3 (RoPE inside attention)", PositionalEncoding::kRope,
       [](Step& b) { b.attention.window.max_distance = 3; }},
      {"rope, window and cap", PositionalEncoding::kRope,
       [](Step& b) {
         b.attention.window.n_global = 1, b.attention.window.n_local = 2,
         b.attention.window.max_distance = 4;
       }},
      {"nope, temperature per length", PositionalEncoding::kNope,
       [](Step& b) { b.attention.logit_scale_by_length = {1.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5}; }},
      {"t5, temperature per length over the whole logit (the bias's gradient scaled)",
       PositionalEncoding::kT5,
       [](Step& b) { b.attention.logit_scale_by_length = {1.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5}; }},
      {"fire, temperature per length over q·k alone", PositionalEncoding::kFire,
       [](Step& b) {
         b.attention.logit_scale_by_length = {1.0, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
         b.attention.scale_covers_bias = false;
       }},
      {"learned, randomized positions", PositionalEncoding::kLearned,
       [](Step& b) {
         for (int s = 0; s < b.n_seq(); ++s)
           for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t)
             b.positions[t] = 2 * (t - b.offsets[s]) + (s % 2);
       }},
      {"rope, token head on every row and scalar head", PositionalEncoding::kRope,
       [](Step& b) { b = with_token_readout(b); }, true},
      {"alibi, token head with symmetric cross-entropy pairs across sequences",
       PositionalEncoding::kAlibi,
       [](Step& b) {
         b = with_token_readout(b);  // rows 0..3, 4..9, 10..16 are the sequences' readouts
         b.token.labels[9] = -1;     // a row read for its pair only
         b.token.pairs = {{3, 9, 12}, {8, 16, 1}, {0.7, 0.4, 0.9}, {0.7, 0.4, 0.9}};
       },
       true},
      {"rope, token head with symmetric KL pairs (no entropy terms) across sequences",
       PositionalEncoding::kRope,
       [](Step& b) {
         b = with_token_readout(b);
         b.token.labels[9] = -1;
         b.token.pairs = {{3, 9, 12}, {8, 16, 1}, {0.7, 0.4, 0.9}, {0.0, 0.0, 0.0}};
       },
       true},
  };
  for (const Row& r : rows) {
    Step batch = make_batch({{1, 0}, {0, 1, 1, 0}, {1, 1, 0, 1, 0}});
    r.edit(batch);
    ModelConfig c = small_config(r.pe);
    c.max_positions = 14;
    c.token_head = r.token_head;
    check_model_gradient(r.name, c, batch);
  }
}
