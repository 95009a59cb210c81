// The positional biases on the attention logits (models/position_bias.hpp): T5's buckets against
// T5's definition, each learned bias's chain rule against finite differences, ALiBi's table
// against the formula the kernels used before it was a table, a user's expression, and the one
// table of encodings (models/positional_encodings.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "cost/run_cost.hpp"
#include "models/cpu/attention.hpp"
#include "models/custom_position_bias.hpp"
#include "models/encodings/t5_bucket.hpp"
#include "models/position_bias.hpp"
#include "tests/support/gradcheck.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

namespace {

// Hugging Face's T5Attention._relative_position_bucket(bidirectional=False) transcribed line by
// line, with torch's float32 arithmetic: relative_position = memory − query = −n.
int hf_t5_bucket(int relative_position, int num_buckets, int max_distance) {
  const int n = -std::min(relative_position, 0);
  const int max_exact = num_buckets / 2;
  const bool is_small = n < max_exact;
  const float log_ratio = std::log(static_cast<float>(n) / static_cast<float>(max_exact));
  const float scale = static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact));
  const long if_large_raw =
      max_exact +
      static_cast<long>(log_ratio / scale * static_cast<float>(num_buckets - max_exact));
  const long if_large = std::min<long>(if_large_raw, num_buckets - 1);
  return is_small ? n : static_cast<int>(if_large);
}

ModelConfig config_of(PositionalEncoding pe, int n_layer = 2, int n_head = 3) {
  ModelConfig c;
  c.pe = pe;
  c.n_layer = n_layer;
  c.n_head = n_head;
  c.d_model = 6 * n_head;
  c.t5_buckets = 8;
  c.t5_max_distance = 20;
  return c;
}

}  // namespace

TEST_CASE("t5 buckets equal T5's definition at every distance 0..10^4") {
  for (const auto& [buckets, max_distance] :
       std::vector<std::pair<int, int>>{{32, 128}, {8, 20}, {2, 2}, {16, 512}, {32, 17}, {7, 9}}) {
    int mismatches = 0, last = 0;
    for (int n = 0; n <= 10000; ++n) {
      const int b = t5_bucket(n, buckets, max_distance);
      mismatches += b != hf_t5_bucket(-n, buckets, max_distance);
      CHECK(b >= last);  // distances farther away never land in a nearer bucket
      last = b;
      if (n < buckets / 2) CHECK(b == n);              // the exact half
      if (n >= max_distance) CHECK(b == buckets - 1);  // saturated: a built-in cap
    }
    CHECK_MESSAGE(mismatches == 0, buckets << " buckets, max_distance " << max_distance << ": "
                                           << mismatches << " distances differ from T5's");
    CHECK(last == buckets - 1);
  }
}

TEST_CASE("the learned biases' gradients: chain() against finite differences of the table") {
  for (PositionalEncoding pe :
       {PositionalEncoding::kT5, PositionalEncoding::kKerple, PositionalEncoding::kFire}) {
    for (bool per_layer : {false, true}) {
      ModelConfig c = config_of(pe);
      c.t5_per_layer = per_layer;
      c.fire_width = 6;
      c.fire_threshold = 9.5;  // queries 0..9 take L, 10.. their own position
      if (pe != PositionalEncoding::kT5 && !per_layer) continue;  // the others: per layer only
      const PositionBias bias(c);
      REQUIRE(bias.learned());
      const int cols = 40;  // past t5's max_distance 20
      const int rows = bias.by_query_position() ? 20 : 1;
      Rng rng(7);
      std::vector<double> pe_params = bias.initial_parameters();
      for (double& x : pe_params) x += 0.5 * rng.normal();
      const std::vector<double> dtable =
          test::random_vector(static_cast<size_t>(c.n_head) * rows * cols, rng);
      for (int t = 0; t < bias.n_tables(); ++t) {
        std::vector<double> analytic(pe_params.size(), 0.0);
        bias.chain(pe_params.data(), t, rows, cols, dtable.data(), analytic.data());
        test::check_gradient(
            positional_encoding_name(pe) + " table " + std::to_string(t), pe_params, analytic,
            [&] { return test::dot(bias.table(pe_params.data(), t, rows, cols), dtable); });
      }
    }
  }
}

TEST_CASE(
    "fire: below its threshold a bias of the distance alone, past it one of the position too") {
  ModelConfig c = config_of(PositionalEncoding::kFire, 1, 2);
  c.fire_width = 5;
  c.fire_threshold = 8;
  const PositionBias fire(c);
  CHECK(fire.by_query_position());
  Rng rng(3);
  std::vector<double> p = fire.initial_parameters();
  REQUIRE(p.size() == fire.n_parameters());
  for (double& x : p) x += rng.normal();
  const int rows = 30, cols = 30;
  const std::vector<double> t = fire.table(p.data(), 0, rows, cols);
  auto at = [&](int h, int r, int d) { return t[(static_cast<size_t>(h) * rows + r) * cols + d]; };
  int moved = 0;
  for (int h = 0; h < 2; ++h) {
    for (int r = 0; r < rows; ++r) {
      // x = ψ(δ)/ψ(max(L, r)): the same for every query up to L (≈ 8 after the noise: up to 5)
      if (r <= 5) CHECK(at(h, r, 3) == at(h, 0, 3));
      moved += at(h, r, 3) != at(h, 0, 3);
    }
  }
  CHECK(moved > 0);  // past L the same distance reads differently
}

TEST_CASE("kerple starts positive and decreasing, spread over its heads, and t5 starts at zero") {
  const ModelConfig c = config_of(PositionalEncoding::kKerple, 1, 4);
  const PositionBias kerple(c);
  const std::vector<double> init = kerple.initial_parameters();
  const std::vector<double> table = kerple.table(init.data(), 0, 1, 10);
  for (int h = 0; h < 4; ++h) {
    CHECK(table[static_cast<size_t>(h) * 10] == 0.0);  // log(1 + 0) = 0
    for (int d = 1; d < 10; ++d) CHECK(table[h * 10 + d] < table[h * 10 + d - 1]);
  }
  // r1_h = 2(h + ½)/H, r2_h = (h + ½)/H: head 0 at d = 1 is −(1/4)·log(1 + 1/8)
  CHECK(table[1] == doctest::Approx(-0.25 * std::log1p(0.125)).epsilon(1e-12));
  const PositionBias t5(config_of(PositionalEncoding::kT5));
  for (double x : t5.initial_parameters()) CHECK(x == 0.0);
}

TEST_CASE("alibi's table is exactly −(m_h·δ) in the kernels' type, as before it was a table") {
  const ModelConfig c = config_of(PositionalEncoding::kAlibi, 2, 6);
  const PositionBias bias(c);
  CHECK(!bias.learned());
  const std::vector<double> slopes = ops::alibi_slopes(6);
  const std::vector<float> tf = bias.table_as<float>(nullptr, 0, 1, 300);
  const std::vector<double> td = bias.table_as<double>(nullptr, 0, 1, 300);
  for (int h = 0; h < 6; ++h)
    for (int d = 0; d < 300; ++d) {
      CHECK(tf[h * 300 + d] == -(static_cast<float>(slopes[h]) * static_cast<float>(d)));
      CHECK(td[h * 300 + d] == -(slopes[h] * d));
    }
}

TEST_CASE("a user's bias: the expression's values, and an error naming d and h where not finite") {
  ModelConfig c = config_of(PositionalEncoding::kBias, 1, 2);
  c.pe_bias = "-(h+1)/8*log(1+d)";
  const std::vector<double> table = PositionBias(c).table(nullptr, 0, 1, 5);
  CHECK(table[4] == doctest::Approx(-std::log(5.0) / 8));
  CHECK(table[5 + 4] == doctest::Approx(-2 * std::log(5.0) / 8));
  c.pe_bias = "-log(d)";  // −∞ at d = 0
  CHECK_THROWS_WITH_AS(check_fixed_bias(c, 10), doctest::Contains("distance d = 0, head h = 0"),
                       UsageError);
  c.pe_bias = "1/(d-7)";  // ±∞ at d = 7 only: a run that meets distance 7 is refused
  CHECK_NOTHROW(check_fixed_bias(c, 6));
  CHECK_THROWS_WITH_AS(check_fixed_bias(c, 7), doctest::Contains("distance d = 7"), UsageError);
  c.pe_bias = "-h";  // no distance: the softmax would not see it
  CHECK_THROWS_WITH_AS(PositionBias{c}, doctest::Contains("does not use the variable d"),
                       UsageError);
  c.pe_bias = "-x*d";
  CHECK_THROWS_AS(PositionBias{c}, UsageError);
}

TEST_CASE("a user's bias as a host function (python:NAME): its values per head, checked like one") {
  auto log_decay = std::make_shared<CustomPositionBias>();
  log_decay->name = "log_decay";
  std::vector<int> heads;  // one call per head, over every distance
  log_decay->f = [&heads](const double* d, size_t n, int h, double* out) {
    heads.push_back(h);
    for (size_t i = 0; i < n; ++i) out[i] = -(h + 1) / 8.0 * std::log(1 + d[i]);
  };
  register_custom_position_bias(log_decay);
  ModelConfig c = config_of(PositionalEncoding::kBias, 1, 2);
  c.pe_bias = "python:log_decay";
  const std::vector<double> table = PositionBias(c).table(nullptr, 0, 1, 5);
  c.pe_bias = "-(h+1)/8*log(1+d)";
  CHECK(table == PositionBias(c).table(nullptr, 0, 1, 5));
  CHECK(heads == std::vector<int>{0, 1});
  auto pole = std::make_shared<CustomPositionBias>();
  pole->name = "pole";
  pole->f = [](const double* d, size_t n, int h, double* out) {
    for (size_t i = 0; i < n; ++i) out[i] = h == 1 && d[i] == 3 ? NAN : 0.0;
  };
  register_custom_position_bias(pole);
  c.pe_bias = "python:pole";
  CHECK_NOTHROW(check_fixed_bias(c, 2));
  CHECK_THROWS_WITH_AS(check_fixed_bias(c, 3),
                       doctest::Contains("'pole' is nan at distance d = 3, head h = 1"),
                       UsageError);
  c.pe_bias = "python:missing";
  CHECK_THROWS_WITH_AS(PositionBias{c},
                       doctest::Contains("no Python position bias named 'missing'"), UsageError);
  auto unnamed = std::make_shared<CustomPositionBias>(*pole);
  unnamed->name = "<lambda>";
  CHECK_THROWS_WITH_AS(register_custom_position_bias(unnamed),
                       doctest::Contains("pe_bias name '<lambda>' must be 1 to 64 letters"),
                       UsageError);
}

TEST_CASE("the table of encodings: every encoding has one row, one name and help") {
  std::set<std::string> names;
  for (const PositionalEncodingInfo& info : positional_encodings()) {
    CHECK(names.insert(info.name).second);
    CHECK(std::string(info.help).size() > 10);
    CHECK(parse_positional_encoding(info.name) == info.pe);
    CHECK(&positional_encoding_info(info.pe) == &info);
    REQUIRE(info.math != nullptr);
    CHECK(&encoding_math(info.pe) == info.math);
    if (info.learned_bias()) CHECK(info.distance_bias());
    // A bias's hooks come together: its tensors, tables and rows belong to a bias.
    if (!info.distance_bias()) {
      const bool no_tensors = info.math->bias_tensors == nullptr;
      const bool no_tables = info.math->bias_tables == nullptr;
      CHECK(no_tensors);
      CHECK(no_tables);
      CHECK_FALSE(info.math->by_query_position);
    }
    CHECK((info.math->absolute == AbsoluteTable::kFixed) == bool(info.math->absolute_values));
    // Relative: it sees distances (a rotation or a bias by δ), so a distance cap applies.
    CHECK(info.relative() == (info.rotary() || info.distance_bias()));
  }
  CHECK(positional_encoding_help().find("t5") != std::string::npos);
  for (const PositionalEncoding pe : {PositionalEncoding::kNope, PositionalEncoding::kLearned})
    CHECK_FALSE(positional_encoding_info(pe).relative());
  for (const PositionalEncoding pe :
       {PositionalEncoding::kAlibi, PositionalEncoding::kRope, PositionalEncoding::kT5,
        PositionalEncoding::kKerple, PositionalEncoding::kFire, PositionalEncoding::kBias})
    CHECK(positional_encoding_info(pe).relative());
}

TEST_CASE("FIRE's settings and a RoPE extension in training reach the model") {
  TrainSpec s;  // length task, l_train 10: a 12-token window
  s.pe = "fire";
  CHECK(resolve(s).model.fire_threshold == 12.0);
  CHECK(resolve(s).model.fire_width == 32);
  s.fire_threshold = "30.5";
  s.fire_width = 8;
  CHECK(resolve(s).model.fire_threshold == 30.5);
  CHECK(resolve(s).model.fire_width == 8);
  s = TrainSpec{};
  s.pe = "rope";
  CHECK(resolve(s).model.rope_scaling.kind == RopeScalingKind::kNone);
  s.train_rope_scaling = "yarn";
  s.train_rope_factor = 2;
  const RopeScaling r = resolve(s).model.rope_scaling;
  CHECK(r.kind == RopeScalingKind::kYarn);
  CHECK(r.factor == 2.0);
  CHECK(r.original_length == 6);  // the window stretched 2× from 6 tokens
  s.train_rope_scaling = "none";  // named plain: plain
  s.train_rope_factor = 1;
  CHECK(resolve(s).model.rope_scaling.kind == RopeScalingKind::kNone);
}

TEST_CASE("an encoding's settings are refused with another encoding, and bad values are named") {
  auto refused = [](TrainSpec s, const std::string& want) {
    CHECK_THROWS_WITH_AS(resolve(s), doctest::Contains(want.c_str()), UsageError);
  };
  TrainSpec s;
  s.t5_buckets = 16;
  refused(s, "--t5-buckets 16 applies to --pe t5 only");
  s = TrainSpec{};
  s.rope_base = 500;
  refused(s, "--rope-base 500 applies to --pe rope only");
  s = TrainSpec{};
  s.pe_bias = "-d";
  refused(s, "--pe-bias '-d' is the bias of --pe bias");
  s = TrainSpec{};
  s.pe = "bias";
  refused(s, "--pe bias needs --pe-bias EXPR");
  s = TrainSpec{};
  s.pe = "t5";
  s.t5_buckets = 1;
  refused(s, "--t5-buckets must be >= 2");
  s.t5_buckets = 32;
  s.t5_max_distance = 16;
  refused(s, "--t5-max-distance must be > --t5-buckets / 2 = 16");
  s.t5_max_distance = 128;
  s.t5_per_layer = 2;
  refused(s, "--t5-per-layer must be 0");
  s = TrainSpec{};
  s.pe = "rope";
  s.rope_base = 1;
  refused(s, "--rope-base must be a finite number > 1");
  s = TrainSpec{};
  s.pe = "bias";
  s.pe_bias = "1/(d-30)";
  s.l_test = 50;  // BOS + 50 + EOS: distances up to 51
  refused(s, "distance d = 30");
  s.l_test = 20;
  CHECK_NOTHROW(resolve(s));
}

TEST_CASE("the memory estimate counts the bias tables: FIRE's grow with the length squared") {
  const auto part = [](const std::string& pe, int l_test, const std::string& name) {
    TrainSpec s;
    s.pe = pe;
    s.l_test = l_test;
    if (pe == "bias") s.pe_bias = "-d";
    const RunCost cost = estimate_run_cost(s, resolve(s).model);
    for (const CostPart& p : cost.memory_parts)
      if (p.what == name) return p.amount;
    return 0.0;
  };
  for (const char* pe : {"nope", "learned", "rope"}) {
    CAPTURE(pe);
    CHECK(part(pe, 100, "position bias tables") == 0);
  }
  for (const char* pe : {"alibi", "t5", "kerple", "bias"}) {
    CAPTURE(pe);
    const double ratio =
        part(pe, 400, "position bias tables") / part(pe, 200, "position bias tables");
    CHECK(ratio == doctest::Approx(402.0 / 202.0));  // distances 0..L−1, L = l_test + 2 tokens
  }
  const double fire =
      part("fire", 400, "position bias tables") / part("fire", 200, "position bias tables");
  CHECK(fire == doctest::Approx((402.0 * 402.0) / (202.0 * 202.0)));
  CHECK(part("fire", 1000, "position bias tables") > 100e6);  // 2 layers × 4 heads × 1002²
  CHECK(part("kerple", 100, "position bias gradients") > 0);
  CHECK(part("alibi", 100, "position bias gradients") == 0);  // fixed: no gradient
}
