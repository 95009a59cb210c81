// What the temperature divides (models/attention_spec.hpp: scale_covers_bias), on the whole model
// for every row of the table of encodings: paper 002's temperature divides the whole logit,
// q·k/√d plus the encoding's bias (§3.2), so the probabilities at τ are softmax(s/τ) of the
// logits s at τ = 1; the content-only variant divides q·k/√d alone. The kernels' own rows (both
// backends, training forward, backward and inference path) are in backend_cases.hpp; the gradient
// through a scaled bias in test_transformer.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/positional_encodings.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/whole_model.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

constexpr double kTau = 0.5;

// Layer 0's probabilities [K=1][S][n_head][L, L] after a training forward at logit scale 1/τ.
std::vector<double> layer0_probabilities(DModel& m, Step step, double tau, bool covers_bias) {
  step.attention.logit_scale = 1.0 / tau;
  step.attention.scale_covers_bias = covers_bias;
  DPacked in;
  pack_step(in, step, m.config());
  m.forward(in);
  return m.download_attention_probabilities(in, 0);
}

// softmax(s/τ) row by row, from probabilities at τ = 1: s_ij = log p_ij up to the row's constant,
// which softmax forgets; a key with p = 0 is one the row does not see, and stays 0.
std::vector<double> sharpened(const std::vector<double>& p1, const Batch& b, int n_head,
                              double tau) {
  std::vector<double> out(p1.size(), 0.0);
  size_t at = 0;
  for (int s = 0; s < b.n_seq(); ++s) {
    const size_t L = static_cast<size_t>(b.seq_len(s));
    for (int h = 0; h < n_head; ++h)
      for (size_t i = 0; i < L; ++i, at += L) {
        double largest = -INFINITY, sum = 0;
        for (size_t j = 0; j < L; ++j)
          if (p1[at + j] > 0) largest = std::max(largest, std::log(p1[at + j]) / tau);
        for (size_t j = 0; j < L; ++j)
          if (p1[at + j] > 0) sum += out[at + j] = std::exp(std::log(p1[at + j]) / tau - largest);
        for (size_t j = 0; j < L; ++j) out[at + j] /= sum;
      }
  }
  return out;
}

double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("temperature over the whole logit: softmax((q·k/√d + b)/τ) for every encoding") {
  const Batch batch = make_batch({{1, 0, 1}, {0, 1, 1, 0, 1, 0, 1}});
  for (const PositionalEncodingInfo& info : positional_encodings()) {
    const std::string name = positional_encoding_name(info.pe);
    CAPTURE(name);
    ModelConfig c = small_config(info.pe);
    DModel m(c);
    init_perturbed(m, 7);
    const std::vector<double> p1 = layer0_probabilities(m, batch, 1.0, true);
    const std::vector<double> logit = layer0_probabilities(m, batch, kTau, true);
    const std::vector<double> content = layer0_probabilities(m, batch, kTau, false);
    const std::vector<double> expected = sharpened(p1, batch, c.n_head, kTau);
    CHECK(largest_difference(logit, expected) < 1e-12);
    if (info.distance_bias()) {
      // The bias left unscaled: another softmax, by far more than rounding.
      CHECK(largest_difference(content, expected) > 1e-3);
    } else {
      // No bias: the two scopes are one computation, to the bit.
      CHECK(content == logit);
    }
    // Scale 1 covers the bias or not: the same bits either way.
    CHECK(layer0_probabilities(m, batch, 1.0, false) == p1);
  }
}

TEST_CASE("temperature over the whole logit: the inference path equals the training forward") {
  for (const PositionalEncodingInfo& info : positional_encodings()) {
    if (!info.distance_bias()) continue;
    const std::string name = positional_encoding_name(info.pe);
    CAPTURE(name);
    DModel m(small_config(info.pe));
    init_perturbed(m, 9);
    Step step = make_batch({{1, 1, 0}, {0, 1, 1, 0, 1, 0, 1, 1}});
    for (bool covers_bias : {true, false}) {
      CAPTURE(covers_bias);
      // τ 0.5 for 6 tokens or more: the second sequence (10 tokens), not the first (5)
      step.attention.logit_scale_by_length = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0};
      step.attention.scale_covers_bias = covers_bias;
      const std::vector<double> trained = outputs(m, step, false),
                                inferred = outputs(m, step, true);
      REQUIRE(trained.size() == inferred.size());
      for (size_t r = 0; r < trained.size(); ++r)
        CHECK(inferred[r] == doctest::Approx(trained[r]).epsilon(1e-12));
    }
    // And the two scopes give different outputs on the longer sequence, the one with τ = 0.5.
    step.attention.scale_covers_bias = true;
    const std::vector<double> logit = outputs(m, step, true);
    step.attention.scale_covers_bias = false;
    const std::vector<double> content = outputs(m, step, true);
    CHECK(logit[0] == content[0]);  // 5 tokens: τ = 1
    CHECK(std::abs(logit[1] - content[1]) > 1e-6);
  }
}
