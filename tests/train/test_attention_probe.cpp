// The attention logits read back from the probabilities (train/attention_probe.hpp) against their
// definitions, by brute force on synthetic logits and end to end on an ALiBi model whose logits are
// known exactly; and paper 002's closed-form temperatures (train/temperature_search.hpp) against
// their formulas and, for Proposition 2, against Gaussian logits.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/attention.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "plots/gnuplot_layers.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/small_model.hpp"
#include "train/attention_probe.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"
#include "train/temperature_search.hpp"

using namespace lenlab;
using namespace lenlab::test;

TEST_CASE("attention probe: the logits' row variance and mean by distance, from probabilities") {
  // One sequence of L = 6, 2 heads, random logits; head 1 also has a window of 3 keys (the others
  // probability 0, as the masked forward leaves them) and row 2 skipped (all 0).
  const int L = 6, H = 2;
  std::mt19937 rng(7);
  std::normal_distribution<double> n01(0, 1.5);
  std::vector<double> s(H * L * L), P(H * L * L, 0.0);
  const auto sees = [](int h, int i, int j) { return j <= i && (h == 0 || i - j < 3); };
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i) {
      if (h == 1 && i == 2) continue;
      double z = 0;
      for (int j = 0; j <= i; ++j)
        if (sees(h, i, j)) z += std::exp(s[(h * L + i) * L + j] = n01(rng));
      for (int j = 0; j <= i; ++j)
        if (sees(h, i, j)) P[(h * L + i) * L + j] = std::exp(s[(h * L + i) * L + j]) / z;
    }
  AttentionLogitsAccumulator acc(1, H);
  acc.add(0, P.data(), L, 1.0);
  const AttentionLogits a = acc.finish();
  REQUIRE(a.max_distance == L - 1);
  for (int h = 0; h < H; ++h) {
    CAPTURE(h);
    double var = 0;
    int rows = 0;
    std::vector<double> dsum(L, 0.0);
    std::vector<int> dn(L, 0);
    for (int i = 0; i < L; ++i) {
      if (h == 1 && i == 2) continue;
      double mean = 0, n = 0;
      for (int j = 0; j <= i; ++j)
        if (sees(h, i, j)) mean += s[(h * L + i) * L + j], ++n;
      mean /= n;
      double v = 0;
      for (int j = 0; j <= i; ++j)
        if (sees(h, i, j)) {
          const double c = s[(h * L + i) * L + j] - mean;
          v += c * c / n;
          dsum[i - j] += c;
          ++dn[i - j];
        }
      var += v;
      ++rows;
    }
    CHECK(a.logit_var[h] == doctest::Approx(var / rows).epsilon(1e-12));
    for (int d = 0; d < L; ++d) {
      CAPTURE(d);
      if (dn[d] == 0)
        CHECK(std::isnan(a.at(0, h, d)));
      else
        CHECK(a.at(0, h, d) == doctest::Approx(dsum[d] / dn[d]).epsilon(1e-12));
    }
  }
}

TEST_CASE("attention probe end to end: an ALiBi model with q = k = 0 has logits −slope·distance") {
  TrainSpec spec;
  spec.task = "length";
  spec.pe = "alibi";
  spec.l_train = 4;
  spec.l_test = 7;
  spec.eval_samples = 8;
  spec.d_model = 8;
  spec.n_head = 2;
  spec.d_ff = 16;
  const ResolvedSpec resolved = resolve(spec);
  Transformer<float> model(resolved.model);
  model.init(1);
  zero_qkv(model);
  EvalJob job = eval_job(resolved, spec);
  job.attention_stats = true;
  job.attention_logits = true;
  const std::vector<LengthResult> results = evaluate(model, {job})[0];
  const std::vector<double> slopes = ops::alibi_slopes(2);
  for (const LengthResult& r : results) {
    CAPTURE(r.length);
    const int T = r.length + 2;  // BOS, the bits, EOS
    const AttentionLogits& a = r.logits;
    REQUIRE(a.n_layer == 2);
    for (int h = 0; h < 2; ++h) {
      CAPTURE(h);
      const double m = slopes[h];
      // Row i sees keys 0..i at distances 0..i: variance m²((i+1)² − 1)/12, and the key at
      // distance d sits m(i/2 − d) above the row's mean logit.
      double var = 0;
      for (int i = 0; i < T; ++i) var += m * m * ((i + 1.0) * (i + 1.0) - 1) / 12 / T;
      CHECK(a.logit_var[h] == doctest::Approx(var).epsilon(1e-4));
      for (int d = 0; d < T; ++d) {
        double c = 0;
        for (int i = d; i < T; ++i) c += m * (i / 2.0 - d) / (T - d);
        CHECK(a.at(0, h, d) == doctest::Approx(c).epsilon(1e-4).scale(1e-3));
      }
      // The last layer computes the EOS row only (row T − 1).
      CHECK(a.logit_var[2 + h] == doctest::Approx(m * m * (double(T) * T - 1) / 12).epsilon(1e-4));
      CHECK(a.at(1, h, 0) == doctest::Approx(m * (T - 1) / 2.0).epsilon(1e-4));
    }
  }
}

TEST_CASE("paper 002's closed-form temperatures: their formulas, their fixed point, no solution") {
  const double P = 0.4, Ltr = 18, Lex = 30, str = 1.3, sex = 0.8;
  // Proposition 2 written out.
  CHECK(temperature_entropy_closed_form(Ltr, Lex, str, sex) ==
        doctest::Approx(sex / std::sqrt(str * str + 2 * std::log(Lex / Ltr))));
  CHECK(temperature_entropy_closed_form(Ltr, Ltr, str, str) == doctest::Approx(1.0));
  CHECK(std::isnan(temperature_entropy_closed_form(Ltr, 2, 0.1, 1.0)));  // radicand < 0
  // Proposition 1: a root of A τ² − B τ + C = 0, the larger one when σ_tr²/2 < log(L_tr·P).
  const double A = std::log(Lex) + std::log(P), B = std::log(Ltr) + std::log(P) + str * str / 2,
               C = sex * sex / 2;
  const double tau = temperature_pmax_closed_form(P, Ltr, Lex, str, sex);
  CHECK(A * tau * tau - B * tau + C == doctest::Approx(0.0).scale(1.0).epsilon(1e-12));
  CHECK(str * str / 2 < std::log(Ltr * P));
  CHECK(tau == doctest::Approx((B + std::sqrt(B * B - 4 * A * C)) / (2 * A)));
  CHECK(temperature_pmax_closed_form(P, Ltr, Ltr, str, str) == doctest::Approx(1.0));
  // A sharp head (σ_tr²/2 > log(L_tr·P)): the paper's larger root would be C/A ≠ 1 at the training
  // length itself; lenlab's branch gives 1 there.
  CHECK(temperature_pmax_closed_form(P, Ltr, Ltr, 3.0, 3.0) == doctest::Approx(1.0));
  // No real root.
  CHECK(std::isnan(temperature_pmax_closed_form(0.05, 20, 1e6, 0.1, 30)));
}

TEST_CASE("Proposition 2 aligns the entropy of Gaussian logits across lengths") {
  // Rows of N(0, σ²) logits: the entropy at L_ex with the closed-form τ is the entropy at L_tr
  // with τ = 1, to the approximation's error (E[e^l] over finite rows), well under 0.05 nats here.
  std::mt19937 rng(3);
  const auto entropy = [&](int L, double sigma, double tau) {
    std::normal_distribution<double> n(0, sigma);
    double sum = 0;
    const int rows = 200;
    for (int r = 0; r < rows; ++r) {
      std::vector<double> l(L);
      double mx = -1e300;
      for (double& x : l) mx = std::max(mx, x = n(rng) / tau);
      double z = 0, zl = 0;
      for (double x : l) {
        z += std::exp(x - mx);
        zl += (x - mx) * std::exp(x - mx);
      }
      sum += std::log(z) - zl / z;
    }
    return sum / rows;
  };
  const double str = 1.0, sex = 1.4;
  const double tau = temperature_entropy_closed_form(2048, 16384, str, sex);
  CHECK(tau < 1);
  CHECK(entropy(16384, sex, tau) == doctest::Approx(entropy(2048, str, 1.0)).epsilon(0.01));
  CHECK(std::abs(entropy(16384, sex, 1.0) - entropy(2048, str, 1.0)) > 0.5);  // unaligned: far off
}

TEST_CASE("attention_distance.csv reads back, and the distance figure averages heads, then seeds") {
  LengthResult r;
  r.length = 3;
  r.token = true;
  AttentionLogits& a = r.logits;
  a.n_layer = 1;
  a.n_head = 2;
  a.max_distance = 2;
  a.logit_var = {0.5, 0.25};
  a.by_distance = {1.0, 0.0,          -1.0,  //
                   3.0, std::nan(""), -3.0};
  std::vector<LengthResult> back(1);
  back[0].length = 3;
  back[0].token = true;
  add_attention_distance_csv(attention_distance_csv_text({r}), "d.csv", back);
  REQUIRE(back[0].logits.max_distance == 2);
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d <= 2; ++d) {
      CAPTURE(h);
      CAPTURE(d);
      if (std::isnan(a.at(0, h, d)))
        CHECK(std::isnan(back[0].logits.at(0, h, d)));
      else
        CHECK(back[0].logits.at(0, h, d) == doctest::Approx(a.at(0, h, d)));
    }
  CHECK_THROWS_AS(add_attention_distance_csv("length,x\n", "d.csv", back), UsageError);

  // Two seeds: the second's logits are the first's + 2.
  RunRecord s1, s2;
  s1.results = {r};
  s2.results = {r};
  for (double& v : s2.results[0].logits.by_distance) v += 2;
  FigureSpec spec;
  spec.name = std::string{"f"};  // not = "f": GCC 12 warns a false -Wrestrict on that (PR 105329)
  FigureSummary fig;
  fig.spec = &spec;
  FigureLine line;
  line.label = "plain";
  line.runs = {&s1, &s2};
  fig.lines.push_back(line);
  REQUIRE(has_layer_figure(fig, LayerFigure::kDistance));
  CHECK_FALSE(has_layer_figure(fig, LayerFigure::kStatistics));  // no attention.csv values
  const std::string dat = layer_figure_dat(fig, LayerFigure::kDistance);
  // Distance 0: heads 1 and 3 → 2 (seed 1), 4 (seed 2): mean 3, range 2..4; distance 1: head 0
  // only (the other NaN) → 0 and 2.
  CHECK(dat.find("\n0 3 2 4\n") != std::string::npos);
  CHECK(dat.find("\n1 1 0 2\n") != std::string::npos);
  CHECK(dat.find("\n2 -1 -2 0\n") != std::string::npos);
}

// A line whose runs do not all hold the data (one of them a run record, without its
// position_bias.csv) would be drawn from part of its seeds: it is left out and named instead.
TEST_CASE("a layer figure leaves out a line whose runs do not all hold its data, and names it") {
  PositionBiasValues bias;
  bias.n_layer = 1;
  bias.n_head = 1;
  bias.max_distance = 1;
  bias.values = {0.0, -1.0};
  RunRecord with1, with2, without;
  with1.position_bias = with2.position_bias = bias;
  with2.position_bias.values = {0.0, -3.0};
  for (RunRecord* r : {&with1, &with2, &without}) r->spec.pe = "t5";
  FigureSpec spec;
  spec.name = std::string{"f"};
  spec.metric = "token_accuracy";
  FigureSummary fig;
  fig.spec = &spec;
  FigureLine whole, part;
  whole.label = "whole";
  whole.runs = {&with1, &with2};
  part.label = "part";
  part.runs = {&with1, &without};
  fig.lines = {whole, part};
  REQUIRE(has_layer_figure(fig, LayerFigure::kBias));
  CHECK(partial_layer_lines(fig, LayerFigure::kBias) == std::vector<std::string>{"part"});
  CHECK(partial_layer_lines(fig, LayerFigure::kDistance).empty());  // no run has logits
  const std::string dat = layer_figure_dat(fig, LayerFigure::kBias);
  // The whole line: distance 1 is −1 and −3 → mean −2; the partial line's block is empty.
  CHECK(dat.find("line whole, layer 0\n0 0 0 0\n1 -2 -3 -1\n") != std::string::npos);
  CHECK(dat.find("line part, layer 0\n0 NaN NaN NaN\n") != std::string::npos);
  const std::string gp = layer_figure_script(fig, LayerFigure::kBias);
  CHECK(gp.find("title ' = whole'") != std::string::npos);
  CHECK(gp.find("part'") == std::string::npos);
}
