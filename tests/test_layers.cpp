// Every CPU layer's backward against central finite differences, in double.
// Each check uses the scalar loss L = Σ out ⊙ R for a fixed random R, so dL/dout = R.
#include <doctest/doctest.h>

#include <cmath>

#include "gradcheck.hpp"
#include "models/cpu/attention.hpp"
#include "models/cpu/embedding.hpp"
#include "models/cpu/gelu.hpp"
#include "models/cpu/layernorm.hpp"
#include "models/cpu/linear.hpp"
#include "models/cpu/rope.hpp"
#include "models/loss.hpp"

using namespace lenlab;
using namespace lenlab::cpu;
using lenlab::test::check_gradient;
using lenlab::test::dot;
using lenlab::test::random_vector;
using Vec = std::vector<double>;

TEST_CASE("linear backward matches finite differences") {
  Rng rng(1);
  const int N = 5, C = 4, OC = 3;
  Vec x = random_vector(N * C, rng), w = random_vector(C * OC, rng), b = random_vector(OC, rng);
  const Vec R = random_vector(N * OC, rng);
  auto loss = [&] {
    Vec out(N * OC);
    linear_forward(out.data(), x.data(), w.data(), b.data(), N, C, OC);
    return dot(out, R);
  };
  Vec dx(N * C, 0), dw(C * OC, 0), db(OC, 0);
  linear_backward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), N, C, OC);
  check_gradient("linear dx", x, dx, loss);
  check_gradient("linear dw", w, dw, loss);
  check_gradient("linear db", b, db, loss);
}

TEST_CASE("layernorm backward matches finite differences") {
  Rng rng(2);
  const int N = 4, C = 6;
  Vec x = random_vector(N * C, rng, 2.0), g = random_vector(C, rng), b = random_vector(C, rng);
  const Vec R = random_vector(N * C, rng);
  Vec mean(N), rstd(N);
  auto loss = [&] {
    Vec out(N * C), m(N), r(N);
    layernorm_forward(out.data(), m.data(), r.data(), x.data(), g.data(), b.data(), N, C);
    return dot(out, R);
  };
  Vec out(N * C);
  layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), g.data(), b.data(), N, C);
  Vec dx(N * C, 0), dg(C, 0), db(C, 0);
  layernorm_backward(dx.data(), dg.data(), db.data(), R.data(), x.data(), g.data(), mean.data(),
                     rstd.data(), N, C);
  check_gradient("layernorm dx", x, dx, loss);
  check_gradient("layernorm dg", g, dg, loss);
  check_gradient("layernorm db", b, db, loss);
}

TEST_CASE("gelu backward matches finite differences and the forward matches the formula") {
  Rng rng(3);
  Vec x = random_vector(40, rng, 2.0);
  const Vec R = random_vector(40, rng);
  auto loss = [&] {
    Vec out(x.size()), th(x.size());
    gelu_forward(out.data(), th.data(), x.data(), x.size());
    return dot(out, R);
  };
  Vec out(x.size()), th(x.size()), dx(x.size(), 0);
  gelu_forward(out.data(), th.data(), x.data(), x.size());
  gelu_backward(dx.data(), x.data(), th.data(), R.data(), x.size());
  check_gradient("gelu dx", x, dx, loss);
  double y, t;
  const double one = 1.0;
  gelu_forward(&y, &t, &one, 1);
  CHECK(y == doctest::Approx(0.8411919906082768).epsilon(1e-12));
}

namespace {
// Three sequences of 1, 4 and 7 tokens packed back to back.
const std::vector<int> kOffsets = {0, 1, 5, 12};

void check_attention(const char* name, const double* slopes, double logit_scale) {
  Rng rng(4);
  const int S = 3, N = 12, d = 8, H = 2;
  const auto att_off = attention_offsets(kOffsets.data(), S, H);
  AttentionOptions<double> opt;
  opt.alibi_slopes = slopes;
  opt.logit_scale = logit_scale;
  Vec qkv = random_vector(N * 3 * d, rng);
  const Vec R = random_vector(N * d, rng);
  Vec att(att_off[S]);
  auto loss = [&] {
    Vec out(N * d), a(att_off[S]);
    attention_forward(out.data(), a.data(), qkv.data(), kOffsets.data(), att_off, S, d, H, opt);
    return dot(out, R);
  };
  Vec out(N * d);
  attention_forward(out.data(), att.data(), qkv.data(), kOffsets.data(), att_off, S, d, H, opt);
  Vec dqkv(qkv.size(), 0);
  attention_backward(dqkv.data(), R.data(), qkv.data(), att.data(), kOffsets.data(), att_off, S, d,
                     H, opt);
  check_gradient(name, qkv, dqkv, loss);
}
}  // namespace

TEST_CASE("attention backward matches finite differences (NoPE, ALiBi, a temperature)") {
  check_attention("attention nope", nullptr, 1.0);
  const double slopes[2] = {0.5, 0.25};
  check_attention("attention alibi", slopes, 1.0);
  check_attention("attention logit_scale 0.7", nullptr, 0.7);
}

TEST_CASE("attention probabilities are causal and normalised") {
  Rng rng(5);
  const int S = 3, N = 12, d = 8, H = 2;
  const auto att_off = attention_offsets(kOffsets.data(), S, H);
  Vec qkv = random_vector(N * 3 * d, rng), out(N * d), att(att_off[S]);
  attention_forward(out.data(), att.data(), qkv.data(), kOffsets.data(), att_off, S, d, H,
                    AttentionOptions<double>{});
  for (int s = 0; s < S; ++s) {
    const int L = kOffsets[s + 1] - kOffsets[s];
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < L; ++i) {
        double sum = 0;
        for (int j = 0; j < L; ++j) {
          const double p = att[att_off[s] + static_cast<size_t>(h) * L * L + i * L + j];
          if (j > i) CHECK(p == 0.0);
          sum += p;
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
      }
  }
}

TEST_CASE("ALiBi slopes follow Press et al.") {
  const auto s4 = alibi_slopes(4);
  REQUIRE(s4.size() == 4);
  CHECK(s4[0] == 0.25);
  CHECK(s4[3] == std::pow(2.0, -8));
  const auto s8 = alibi_slopes(8);
  CHECK(s8[0] == 0.5);
  CHECK(s8[7] == std::pow(2.0, -8));
  // 6 heads: the 4 slopes of 4 heads, then slopes 1 and 3 of 8 heads.
  const auto s6 = alibi_slopes(6);
  REQUIRE(s6.size() == 6);
  CHECK(s6[4] == s8[0]);
  CHECK(s6[5] == s8[2]);
}

TEST_CASE("rope backward matches finite differences") {
  Rng rng(6);
  const int S = 3, N = 12, d = 8, H = 2;
  RopeTable<double> table;
  table.ensure(7, d / H, 10000.0);
  Vec x = random_vector(N * 3 * d, rng);
  const Vec R = random_vector(N * 3 * d, rng);
  auto loss = [&] {
    Vec out(x.size());
    rope_forward(out.data(), x.data(), kOffsets.data(), S, d, H, table);
    return dot(out, R);
  };
  Vec dx(x.size(), 0);
  rope_backward(dx.data(), R.data(), kOffsets.data(), S, d, H, table);
  check_gradient("rope dx", x, dx, loss);
}

TEST_CASE("rope makes q·k depend on positions only through their difference") {
  Rng rng(7);
  const int d = 8, H = 1, L = 20;
  RopeTable<double> table;
  table.ensure(L, d, 10000.0);
  // One sequence of L tokens, every token carrying the same q and k.
  const Vec q = random_vector(d, rng), k = random_vector(d, rng);
  Vec x(L * 3 * d, 0.0), y(L * 3 * d);
  for (int t = 0; t < L; ++t)
    for (int c = 0; c < d; ++c) {
      x[t * 3 * d + c] = q[c];
      x[t * 3 * d + d + c] = k[c];
    }
  const std::vector<int> off = {0, L};
  rope_forward(y.data(), x.data(), off.data(), 1, d, H, table);
  auto qk = [&](int i, int j) {
    double s = 0;
    for (int c = 0; c < d; ++c) s += y[i * 3 * d + c] * y[j * 3 * d + d + c];
    return s;
  };
  for (int delta : {1, 5, 11})
    for (int i = 0; i + delta < L; i += 3)
      for (int j = 0; j <= i; ++j)
        CHECK(qk(i, j) == doctest::Approx(qk(i + delta, j + delta)).epsilon(1e-12));
  CHECK(qk(5, 0) != doctest::Approx(qk(5, 4)));  // but it does depend on the difference
}

TEST_CASE("embedding and EOS gather backward match finite differences") {
  Rng rng(8);
  const int S = 3, N = 12, d = 5, V = 4;
  std::vector<int> tokens = {2, 2, 0, 1, 3, 2, 1, 1, 0, 1, 0, 3};
  Vec wte = random_vector(V * d, rng), wpe = random_vector(7 * d, rng);
  const Vec R = random_vector(S * d, rng);
  auto loss = [&] {
    Vec emb(N * d), last(S * d);
    embedding_forward(emb.data(), tokens.data(), kOffsets.data(), S, wte.data(), wpe.data(), d);
    gather_last_forward(last.data(), emb.data(), kOffsets.data(), S, d);
    return dot(last, R);
  };
  Vec demb(N * d, 0), dwte(V * d, 0), dwpe(7 * d, 0);
  gather_last_backward(demb.data(), R.data(), kOffsets.data(), S, d);
  embedding_backward(dwte.data(), dwpe.data(), demb.data(), tokens.data(), kOffsets.data(), S, d);
  check_gradient("embedding dwte", wte, dwte, loss);
  check_gradient("embedding dwpe", wpe, dwpe, loss);
}

TEST_CASE("mse loss gradient matches finite differences, weighted and unweighted") {
  Rng rng(9);
  Vec pred = random_vector(6, rng);
  const Vec target = random_vector(6, rng);
  for (const Vec& weights : {Vec{}, Vec{0.1, 0.2, 0.3, 0.1, 0.2, 0.1}}) {
    Vec dpred(6);
    const double l = mse_loss(pred.data(), target, weights, dpred.data());
    CHECK(l > 0);
    check_gradient("mse", pred, dpred,
                   [&] { return mse_loss<double>(pred.data(), target, weights, nullptr); });
  }
}
