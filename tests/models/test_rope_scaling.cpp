// RoPE scaling tables (models/rope_scaling.hpp): factor 1 is the plain table bit for bit for every
// kind, and PI, NTK-aware, dynamic NTK and both YaRNs (the field's ramp in pair index, the paper's
// in rotations) move the angles as their definitions say, each expected value computed here from
// the formula rather than read back from the implementation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/rope_scaling.hpp"

using namespace lenlab;

namespace {

constexpr double kBase = 10000.0;
constexpr double kTwoPi = 2.0 * 3.14159265358979323846264338327950288;

// θ_m = base^(−2m/hd), as models/cpu/rope.hpp computes it.
std::vector<double> plain(int head_dim, double base = kBase) {
  std::vector<double> theta;
  for (int k = 0; k < head_dim / 2; ++k) theta.push_back(std::pow(base, -2.0 * k / head_dim));
  return theta;
}

RopeScaling scaling(RopeScalingKind kind, double factor, int original_length = 0) {
  RopeScaling s;
  s.kind = kind;
  s.factor = factor;
  s.original_length = original_length;
  return s;
}

bool close(double got, double want, double rel = 1e-12) {
  return std::abs(got - want) <= rel * std::abs(want);
}

// The message of the UsageError that `f` throws; "" (and a failed check) when it throws none.
template <class F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  FAIL_CHECK("no UsageError thrown");
  return "";
}

}  // namespace

TEST_CASE("rope scaling with factor 1 is the plain table bit for bit, for every kind") {
  for (const int hd : {2, 8, 64}) {
    const std::vector<double> want = plain(hd);
    for (const std::string& name : rope_scaling_names()) {
      CAPTURE(name);
      CAPTURE(hd);
      // dynamic NTK is plain only up to the training length: a sequence of 100 tokens of 100
      const RopeAngles a = rope_angles(scaling(parse_rope_scaling(name), 1.0, 100), hd, kBase, 100);
      CHECK(a.theta == want);  // exact: == on doubles
      CHECK(a.position_scale == 1.0);
      CHECK(a.logit_scale == 1.0);
    }
  }
}

TEST_CASE("rope scaling names round-trip") {
  CHECK(rope_scaling_names() ==
        std::vector<std::string>{"none", "pi", "ntk", "yarn", "yarn-paper", "dynamic-ntk"});
  for (const std::string& name : rope_scaling_names())
    CHECK(rope_scaling_name(parse_rope_scaling(name)) == name);
  CHECK(parse_rope_scaling("dynamic-ntk") == RopeScalingKind::kDynamicNtk);
}

TEST_CASE("none ignores the factor") {
  const RopeAngles a = rope_angles(scaling(RopeScalingKind::kNone, 4.0), 16, kBase, 1000);
  CHECK(a.theta == plain(16));
  CHECK(a.position_scale == 1.0);
  CHECK(a.logit_scale == 1.0);
}

TEST_CASE("PI divides positions by s and leaves the frequencies") {
  for (const double s : {4.0, 2.5, 0.5}) {
    CAPTURE(s);
    const RopeAngles a = rope_angles(scaling(RopeScalingKind::kPi, s), 32, kBase, 0);
    CHECK(a.position_scale == 1.0 / s);
    CHECK(a.theta == plain(32));
    CHECK(a.logit_scale == 1.0);
  }
}

TEST_CASE("NTK-aware scaling keeps the highest frequency and divides the lowest by s") {
  for (const int hd : {4, 16, 64}) {
    for (const double s : {2.0, 4.0, 8.0, 0.5}) {
      CAPTURE(hd);
      CAPTURE(s);
      const RopeAngles a = rope_angles(scaling(RopeScalingKind::kNtk, s), hd, kBase, 0);
      const std::vector<double> p = plain(hd);
      REQUIRE(a.theta.size() == p.size());
      CHECK(a.position_scale == 1.0);
      CHECK(a.logit_scale == 1.0);
      CHECK(a.theta[0] == 1.0);  // base'^0
      // m = hd/2 − 1: (base·s^(hd/(hd−2)))^(−(hd−2)/hd) = base^(−(hd−2)/hd) / s
      CHECK(close(a.theta.back(), p.back() / s));
      // every pair: base' = base · s^(hd/(hd−2))
      const double base2 = kBase * std::pow(s, static_cast<double>(hd) / (hd - 2));
      for (int m = 0; m < hd / 2; ++m)
        CHECK(close(a.theta[static_cast<size_t>(m)], std::pow(base2, -2.0 * m / hd)));
    }
  }
}

TEST_CASE("the paper's YaRN keeps fast pairs, interpolates slow ones and ramps in r between") {
  // hd 64, base 10000, 1024 training tokens: r_m = 1024·θ_m / 2π is ≈ 163 at m = 0, above β = 32
  // for m ≤ 5, below α = 1 for m ≥ 18, and in between for m = 6 .. 17.
  const int hd = 64, L = 1024;
  const double s = 4.0;
  const RopeAngles a = rope_angles(scaling(RopeScalingKind::kYarnPaper, s, L), hd, kBase, 4 * L);
  const std::vector<double> p = plain(hd);
  REQUIRE(a.theta.size() == p.size());
  CHECK(a.position_scale == 1.0);
  CHECK(a.logit_scale == doctest::Approx((0.1 * std::log(4.0) + 1) * (0.1 * std::log(4.0) + 1)));
  const auto rotations = [&](int m) { return L / (kTwoPi / p[static_cast<size_t>(m)]); };

  // high frequency, r > β: unchanged
  REQUIRE(rotations(0) > 32.0);
  REQUIRE(rotations(5) > 32.0);
  CHECK(a.theta[0] == p[0]);
  CHECK(a.theta[5] == p[5]);
  // low frequency, r < α: divided by s, as PI
  REQUIRE(rotations(18) < 1.0);
  CHECK(close(a.theta[18], p[18] / s));
  CHECK(close(a.theta[31], p[31] / s));
  // in between: γ = (r − α)/(β − α), θ' = (1 − γ)·θ/s + γ·θ
  for (const int m : {6, 10, 17}) {
    CAPTURE(m);
    const double r = rotations(m);
    REQUIRE(r > 1.0);
    REQUIRE(r < 32.0);
    const double gamma = (r - 1.0) / 31.0;
    CHECK(close(a.theta[static_cast<size_t>(m)],
                (1 - gamma) * p[static_cast<size_t>(m)] / s + gamma * p[static_cast<size_t>(m)]));
    CHECK(a.theta[static_cast<size_t>(m)] < p[static_cast<size_t>(m)]);
    CHECK(a.theta[static_cast<size_t>(m)] > p[static_cast<size_t>(m)] / s);
  }
  // the new frequencies still decrease with m
  for (int m = 1; m < hd / 2; ++m)
    CHECK(a.theta[static_cast<size_t>(m)] < a.theta[static_cast<size_t>(m) - 1]);
}

TEST_CASE("YaRN's attention scale is (0.1 ln s + 1)^2, and 1 for s <= 1, with either ramp") {
  const double t = 0.1 * std::log(4.0) + 1.0;
  for (RopeScalingKind kind : {RopeScalingKind::kYarn, RopeScalingKind::kYarnPaper}) {
    CHECK(close(rope_angles(scaling(kind, 4.0, 64), 64, kBase, 0).logit_scale, t * t));
    CHECK(rope_angles(scaling(kind, 0.5, 64), 64, kBase, 0).logit_scale == 1.0);
  }
}

TEST_CASE("the paper's YaRN reads its ramp bounds") {
  // α = 0.5, β = 2 with 64 training tokens: r_m = 64·θ_m / 2π
  RopeScaling s = scaling(RopeScalingKind::kYarnPaper, 2.0, 64);
  s.yarn_alpha = 0.5;
  s.yarn_beta = 2.0;
  const RopeAngles a = rope_angles(s, 16, kBase, 0);
  const std::vector<double> p = plain(16);
  for (int m = 0; m < 8; ++m) {
    CAPTURE(m);
    const double th = p[static_cast<size_t>(m)];
    const double r = 64.0 * th / kTwoPi;
    const double g = r < 0.5 ? 0.0 : r > 2.0 ? 1.0 : (r - 0.5) / 1.5;
    CHECK(close(a.theta[static_cast<size_t>(m)], (1 - g) * th / 2.0 + g * th));
  }
}

namespace {

// The YaRN authors' code and Hugging Face transformers' _compute_yarn_parameters, written out for
// pair i in double: the frequencies as 1 / base^(2i/hd) (extrapolated) and 1 / (s·base^(2i/hd))
// (interpolated); the correction range in pair indices where a pair turns β and α times over L0,
// floored / ceiled and clamped to [0, hd − 1]; a linear ramp in i between, clamped to [0, 1].
double reference_yarn(int i, int hd, double s, int L0, double alpha = 1.0, double beta = 32.0) {
  const double pos_freq = std::pow(kBase, 2.0 * i / hd);
  const double extrapolated = 1.0 / pos_freq, interpolated = 1.0 / (s * pos_freq);
  const auto correction_dim = [&](double rotations) {
    return hd * std::log(L0 / (rotations * 2.0 * M_PI)) / (2.0 * std::log(kBase));
  };
  const double low = std::max(std::floor(correction_dim(beta)), 0.0);
  double high = std::min(std::ceil(correction_dim(alpha)), hd - 1.0);
  if (low == high) high += 0.001;
  const double ramp = std::min(std::max((i - low) / (high - low), 0.0), 1.0);
  const double extrapolation_factor = 1.0 - ramp;
  return interpolated * (1.0 - extrapolation_factor) + extrapolated * extrapolation_factor;
}

}  // namespace

TEST_CASE("yarn is the field's ramp: the references' formula over head sizes, factors, lengths") {
  double worst = 0;
  for (const int hd : {16, 32, 64, 128})
    for (const double s : {1.0, 1.5, 2.0, 4.0, 8.0, 16.0})
      for (const int L0 : {16, 18, 64, 201, 256, 1024, 4096}) {
        CAPTURE(hd);
        CAPTURE(s);
        CAPTURE(L0);
        const RopeAngles a = rope_angles(scaling(RopeScalingKind::kYarn, s, L0), hd, kBase, 0);
        REQUIRE(a.theta.size() == static_cast<size_t>(hd / 2));
        CHECK(a.position_scale == 1.0);
        for (int i = 0; i < hd / 2; ++i) {
          const double want = reference_yarn(i, hd, s, L0);
          worst = std::max(worst, std::abs(a.theta[static_cast<size_t>(i)] - want) / want);
        }
      }
  CHECK(worst < 1e-12);
  // Other bounds are read: α = 2, β = 8 at L0 = 1024, s = 4.
  RopeScaling bounds = scaling(RopeScalingKind::kYarn, 4.0, 1024);
  bounds.yarn_alpha = 2.0;
  bounds.yarn_beta = 8.0;
  const RopeAngles a = rope_angles(bounds, 64, kBase, 0);
  for (int i = 0; i < 32; ++i)
    CHECK(close(a.theta[static_cast<size_t>(i)], reference_yarn(i, 64, 4.0, 1024, 2.0, 8.0)));
}

TEST_CASE(
    "the two YaRN ramps: the field's keeps the fastest pair of a short context, the paper's "
    "interpolates it") {
  // L0 = 16 tokens: the fastest pair turns 16/2π ≈ 2.5 times, below β = 32. The references'
  // correction range starts at pair 0 (clamped), whose ramp is 0: kept. The paper's γ(2.5) =
  // 1.5/31 interpolates it almost as PI does.
  const std::vector<double> p = plain(64);
  const RopeAngles field = rope_angles(scaling(RopeScalingKind::kYarn, 16.0, 16), 64, kBase, 0);
  const RopeAngles paper =
      rope_angles(scaling(RopeScalingKind::kYarnPaper, 16.0, 16), 64, kBase, 0);
  CHECK(field.theta[0] == p[0]);
  const double gamma = (16.0 / kTwoPi - 1.0) / 31.0;
  CHECK(close(paper.theta[0], (1 - gamma) * p[0] / 16.0 + gamma * p[0]));
  CHECK(field.theta[0] / paper.theta[0] > 9.0);
  // Long contexts too differ inside the ramp: at L0 = 4096, s = 16, the largest ratio of the two
  // tables' angles is above 1.5 (the ramps cross the same pairs at different speeds).
  const RopeAngles f2 = rope_angles(scaling(RopeScalingKind::kYarn, 16.0, 4096), 64, kBase, 0);
  const RopeAngles p2 = rope_angles(scaling(RopeScalingKind::kYarnPaper, 16.0, 4096), 64, kBase, 0);
  double largest = 1;
  for (size_t m = 0; m < 32; ++m)
    largest = std::max({largest, f2.theta[m] / p2.theta[m], p2.theta[m] / f2.theta[m]});
  CHECK(largest > 1.5);
}

TEST_CASE("dynamic NTK is plain up to the training length and NTK with s = L / L_orig beyond") {
  const int hd = 32, L0 = 100;
  for (const int tokens : {1, 50, 100}) {
    CAPTURE(tokens);
    for (const double f : {1.0, 2.0}) {
      const RopeAngles a =
          rope_angles(scaling(RopeScalingKind::kDynamicNtk, f, L0), hd, kBase, tokens);
      CHECK(a.theta == plain(hd));
      CHECK(a.position_scale == 1.0);
      CHECK(a.logit_scale == 1.0);
    }
  }
  for (const int tokens : {101, 150, 400, 1000}) {
    CAPTURE(tokens);
    const RopeAngles dyn =
        rope_angles(scaling(RopeScalingKind::kDynamicNtk, 1.0, L0), hd, kBase, tokens);
    const RopeAngles ntk =
        rope_angles(scaling(RopeScalingKind::kNtk, static_cast<double>(tokens) / L0), hd, kBase, 0);
    // bit for bit: (1·L)/L_orig − 0 is the same double as L/L_orig
    CHECK(dyn.theta == ntk.theta);
    CHECK(dyn.position_scale == 1.0);
    CHECK(dyn.logit_scale == 1.0);
  }
  // factor 2 at 400 tokens of 100: base' = base · (2·4 − 1)^(hd/(hd−2))
  const RopeAngles a = rope_angles(scaling(RopeScalingKind::kDynamicNtk, 2.0, L0), hd, kBase, 400);
  const double base2 = kBase * std::pow(7.0, 32.0 / 30.0);
  for (int m = 0; m < hd / 2; ++m)
    CHECK(close(a.theta[static_cast<size_t>(m)], std::pow(base2, -2.0 * m / hd)));
}

TEST_CASE("bad rope scaling inputs are usage errors that name the bad value") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::string& name : rope_scaling_names()) {
    CAPTURE(name);
    const RopeScalingKind kind = parse_rope_scaling(name);
    CHECK(usage_error([&] { rope_angles(scaling(kind, 0.0, 64), 16, kBase, 8); }).find("got 0") !=
          std::string::npos);
    CHECK(usage_error([&] { rope_angles(scaling(kind, -1.0, 64), 16, kBase, 8); }).find("got -1") !=
          std::string::npos);
    CHECK(usage_error([&] { rope_angles(scaling(kind, nan, 64), 16, kBase, 8); }).find("nan") !=
          std::string::npos);
    CHECK(usage_error([&] { rope_angles(scaling(kind, inf, 64), 16, kBase, 8); }).find("inf") !=
          std::string::npos);
  }
  CHECK_THROWS_WITH_AS(parse_rope_scaling("linear"), doctest::Contains("'linear'"), UsageError);
  CHECK_THROWS_WITH_AS(parse_rope_scaling("linear"), doctest::Contains("'dynamic-ntk'"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_rope_scaling(""), doctest::Contains("unknown rope scaling ''"),
                       UsageError);
  // YaRN and dynamic NTK need the training length
  CHECK_THROWS_WITH_AS(rope_angles(scaling(RopeScalingKind::kYarn, 2.0, 0), 16, kBase, 8),
                       doctest::Contains("got 0"), UsageError);
  CHECK_THROWS_WITH_AS(rope_angles(scaling(RopeScalingKind::kDynamicNtk, 2.0, -5), 16, kBase, 8),
                       doctest::Contains("got -5"), UsageError);
  CHECK_NOTHROW(rope_angles(scaling(RopeScalingKind::kNtk, 2.0, 0), 16, kBase, 8));
  CHECK_NOTHROW(rope_angles(scaling(RopeScalingKind::kPi, 2.0, 0), 16, kBase, 8));
  // YaRN's ramp needs 0 < alpha < beta
  RopeScaling y = scaling(RopeScalingKind::kYarn, 2.0, 64);
  y.yarn_alpha = 32.0;
  y.yarn_beta = 1.0;
  CHECK_THROWS_WITH_AS(rope_angles(y, 16, kBase, 8), doctest::Contains("alpha 32 and beta 1"),
                       UsageError);
  y.yarn_alpha = 0.0;
  y.yarn_beta = 32.0;
  CHECK_THROWS_AS(rope_angles(y, 16, kBase, 8), UsageError);
  y.yarn_alpha = 4.0;
  y.yarn_beta = 4.0;
  CHECK_THROWS_AS(rope_angles(y, 16, kBase, 8), UsageError);
  y.yarn_alpha = 1.0;
  y.yarn_beta = nan;
  CHECK_THROWS_AS(rope_angles(y, 16, kBase, 8), UsageError);
}
