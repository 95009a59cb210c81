// Sinusoidal positions (models/encodings/sinusoidal.cpp): the table against Vaswani et al.'s
// formula written out here, at positions 0..10^5; the model adds it at any length without a
// parameter or a size. Its gradients, causality and inference path are every encoding's tests
// (test_transformer.cpp, test_model_properties.cpp: they read the table of encodings).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/encodings/encoding_math.hpp"
#include "models/positional_encodings.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/whole_model.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// §3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(the same).
double vaswani(int pos, int column, int d_model) {
  const int two_i = column - column % 2;
  const double angle = pos / std::pow(10000.0, static_cast<double>(two_i) / d_model);
  return column % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

const EncodingMath& sinusoidal() {
  return encoding_math(parse_positional_encoding("sinusoidal"));
}

}  // namespace

TEST_CASE("sinusoidal positions: the table is Vaswani et al.'s formula at positions 0..10^5") {
  const EncodingMath& m = sinusoidal();
  REQUIRE(m.absolute == AbsoluteTable::kFixed);
  CHECK((m.bias_tensors == nullptr && m.make_bias == nullptr));
  CHECK_FALSE(m.rotary);
  constexpr int kPositions = 100001;
  for (int d : {8, 9, 64}) {
    CAPTURE(d);
    std::vector<double> table(static_cast<size_t>(kPositions) * d);
    m.absolute_values(0, kPositions, d, table.data());
    double worst = 0;
    for (int p = 0; p < kPositions; ++p)
      for (int j = 0; j < d; ++j)
        worst = std::max(worst, std::abs(table[static_cast<size_t>(p) * d + j] - vaswani(p, j, d)));
    // The two ways of forming the angle (p·10000^(−x) here, p/10000^x above) differ by an ulp of
    // an angle up to 10^5: ~1.5e-11.
    CHECK(worst < 1e-10);
    // Position 0 is (0, 1, 0, 1, ...) exactly; column 0 is sin(p) exactly.
    for (int j = 0; j < d; ++j) CHECK(table[j] == (j % 2 == 0 ? 0.0 : 1.0));
    CHECK(table[static_cast<size_t>(7) * d] == std::sin(7.0));
    // Rows from any first position are the same rows.
    std::vector<double> tail(static_cast<size_t>(11) * d);
    m.absolute_values(kPositions - 11, 11, d, tail.data());
    CHECK(std::equal(tail.begin(), tail.end(), table.end() - static_cast<long>(tail.size())));
  }
}

TEST_CASE(
    "sinusoidal positions: no parameters, and the model is learned positions holding the table") {
  const PositionalEncoding pe = parse_positional_encoding("sinusoidal");
  ModelConfig c = small_config(pe);
  c.max_positions = 0;  // a learned table's size; sinusoidal has none
  DModel model(c);
  init_perturbed(model, 3);
  const std::vector<double> p = model.parameters(0);
  CHECK(p.size() == DModel(small_config(PositionalEncoding::kNope)).parameters(0).size());
  // The same weights in a learned-positions model whose table [3000, d] holds the formula's rows:
  // its parameters are sinusoidal's with the table after wte (models/parameters.hpp's order).
  constexpr int kRows = 3000;
  ModelConfig lc = small_config(PositionalEncoding::kLearned);
  lc.max_positions = kRows;
  DModel learned(lc);
  std::vector<double> table(static_cast<size_t>(kRows) * c.d_model);
  for (int pos = 0; pos < kRows; ++pos)
    for (int j = 0; j < c.d_model; ++j)
      table[static_cast<size_t>(pos) * c.d_model + j] = vaswani(pos, j, c.d_model);
  const auto wte_end = p.begin() + static_cast<long>(c.vocab_size) * c.d_model;
  std::vector<double> lp(p.begin(), wte_end);
  lp.insert(lp.end(), table.begin(), table.end());
  lp.insert(lp.end(), wte_end, p.end());
  REQUIRE(lp.size() == learned.parameters(0).size());
  learned.set_parameters(0, lp.data());
  // A short sequence, then one of 3000 tokens (the rows grow to what a batch reaches), then a short
  // one placed at positions 2000.. (rows already there).
  std::vector<int> bits(kRows - 2);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<int>(i % 3 == 0);
  Batch far = make_batch({{1, 0, 1}});
  for (int32_t& pos : far.positions) pos += 2000;
  for (const Batch& b : {make_batch({{1, 0}}), make_batch({bits}), far}) {
    const double got = outputs(model, b, false)[0];
    CHECK(std::isfinite(got));
    CHECK(got == doctest::Approx(outputs(learned, b, false)[0]).epsilon(1e-12));
  }
}

TEST_CASE("sinusoidal positions move the output with position, and NoPE's does not move") {
  // The same weights (sinusoidal has NoPE's parameters); one sequence at positions 0.. and 5..
  const ModelConfig c = small_config(parse_positional_encoding("sinusoidal"));
  DModel model(c);
  init_perturbed(model, 4);
  const std::vector<int> bits = {1, 0, 1, 1};
  const double at_0 = outputs(model, make_batch({bits}), false)[0];
  Batch shifted = make_batch({bits});
  for (int32_t& p : shifted.positions) p += 5;
  CHECK(outputs(model, shifted, false)[0] != doctest::Approx(at_0).epsilon(1e-9));
  DModel plain(small_config(PositionalEncoding::kNope));
  plain.set_parameters(0, model.parameters(0).data());
  CHECK(outputs(plain, shifted, false)[0] ==
        doctest::Approx(outputs(plain, make_batch({bits}), false)[0]).epsilon(1e-12));
}

TEST_CASE(
    "the token embedding times sqrt(d): the model whose wte is scaled by hand, and 1 as before") {
  // Vaswani et al. §3.4 multiply the token embedding by √d_model before adding the table; the
  // same model with scale 1 and wte multiplied by √d_model here must give the same outputs, and
  // scale 1 the plain model's bit for bit.
  for (const PositionalEncoding pe :
       {PositionalEncoding::kSinusoidal, PositionalEncoding::kLearned, PositionalEncoding::kNope}) {
    CAPTURE(positional_encoding_name(pe));
    ModelConfig c = small_config(pe);
    c.max_positions = 12;
    const ModelConfig base = c;
    DModel plain(base);
    init_perturbed(plain, 5);
    c.embedding_scale = std::sqrt(static_cast<double>(c.d_model));
    DModel scaled(c);
    std::vector<double> p = plain.parameters(0);
    scaled.set_parameters(0, p.data());
    for (size_t i = 0; i < static_cast<size_t>(c.vocab_size) * c.d_model; ++i)  // wte first
      p[i] *= c.embedding_scale;
    DModel by_hand(base);
    by_hand.set_parameters(0, p.data());
    const Batch b = make_batch({{1, 0, 1, 1}, {0, 1}});
    for (const bool infer : {false, true}) {
      const std::vector<double> got = outputs(scaled, b, infer), want = outputs(by_hand, b, infer);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
    }
    DModel one(base);
    one.set_parameters(0, plain.parameters(0).data());
    CHECK(outputs(one, b, false) == outputs(plain, b, false));
  }
}
