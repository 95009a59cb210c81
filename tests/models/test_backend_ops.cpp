// The backend test table (tests/backend_cases.hpp) on the CPU, one test case per op:
// CpuBackend<double> against finite differences, its property checks and equivalent rows, then
// CpuBackend<float> against CpuBackend<double>. Also: the table reaches every backend operation,
// and the checks about RoPE and ALiBi that are not about one op's outputs.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "models/cpu/backend.hpp"
#include "tests/models/backend_runner.hpp"

using namespace lenlab;
using namespace lenlab::test;

#define LENLAB_CPU_OP_TEST(op)                          \
  TEST_CASE("backend ops: " #op) {                      \
    check_reference(#op);                               \
    check_backend<CpuBackend<float>>(#op, "cpu float"); \
  }
LENLAB_CASE_OPS(LENLAB_CPU_OP_TEST)
#undef LENLAB_CPU_OP_TEST

namespace {

// CpuBackend<double>, noting which operations a run calls.
struct RecordingBackend : CpuBackend<double> {
  static inline std::set<std::string> called;
#define LENLAB_RECORD(op)                          \
  template <class... A>                            \
  static void op(A&&... a) {                       \
    called.insert(#op);                            \
    CpuBackend<double>::op(std::forward<A>(a)...); \
  }
  LENLAB_BACKEND_OPS(LENLAB_RECORD)
#undef LENLAB_RECORD
};

}  // namespace

TEST_CASE("backend ops: the table calls every backend operation, and every row's op is tested") {
  const std::set<std::string> tested = {
#define LENLAB_NAME(op) #op,
      LENLAB_CASE_OPS(LENLAB_NAME)
#undef LENLAB_NAME
  };
  for (const Case& row : backend_cases())
    std::visit(
        [&](const auto& c) {
          CHECK_MESSAGE(tested.count(c.op()) == 1,
                        c.name() << ": op " << c.op() << " is not in LENLAB_CASE_OPS");
          c.template run<RecordingBackend>(c.make());
        },
        row);
#define LENLAB_CALLED(op)                                 \
  CHECK_MESSAGE(RecordingBackend::called.count(#op) == 1, \
                #op " is called by no row of tests/backend_cases.hpp");
  LENLAB_BACKEND_OPS(LENLAB_CALLED)
#undef LENLAB_CALLED
}

TEST_CASE("backend ops: the attention rows exercise every equivalence") {
  // [training, inference] rows with an equivalent row that drops a window, drops a cap, or
  // applies RoPE before attention instead of inside it; training rows run on the CPU's other
  // path (tiles for short sequences, rows for long ones).
  int window[2] = {}, cap[2] = {}, rope[2] = {};
  int tiled = 0, row_by_row = 0;  // training rows checked against the other path
  for (const Case& row : backend_cases())
    if (const auto* c = std::get_if<AttentionCase>(&row))
      for (const auto& [e, tol] : c->equivalents()) {
        window[c->infer] += e.n_local != c->n_local;
        cap[c->infer] += e.max_distance != c->max_distance;
        rope[c->infer] += e.rope != c->rope;
        tiled += e.cpu_tiled_from == 0;
        row_by_row += e.cpu_tiled_from == INT_MAX;
      }
  for (int infer : {0, 1}) {
    CAPTURE(infer);
    CHECK(window[infer] > 0);
    CHECK(cap[infer] > 0);
    CHECK(rope[infer] > 0);
  }
  CHECK(tiled > 0);
  CHECK(row_by_row > 0);
}

TEST_CASE("ALiBi slopes follow Press et al.") {
  const auto s4 = ops::alibi_slopes(4);
  REQUIRE(s4.size() == 4);
  CHECK(s4[0] == 0.25);
  CHECK(s4[3] == std::pow(2.0, -8));
  const auto s8 = ops::alibi_slopes(8);
  CHECK(s8[0] == 0.5);
  CHECK(s8[7] == std::pow(2.0, -8));
  // 6 heads: the 4 slopes of 4 heads, then slopes 1 and 3 of 8 heads.
  const auto s6 = ops::alibi_slopes(6);
  REQUIRE(s6.size() == 6);
  CHECK(s6[4] == s8[0]);
  CHECK(s6[5] == s8[2]);
}

TEST_CASE("rope makes q·k depend on positions only through their difference") {
  Rng rng(7);
  const int d = 8, H = 1, L = 20;
  ops::RopeTable<double> table;
  table.ensure(L, d, 10000.0);
  // One sequence of L tokens at positions 0 .. L-1, every token carrying the same q and k.
  const std::vector<double> q = random_vector(d, rng), k = random_vector(d, rng);
  std::vector<double> x(L * 3 * d, 0.0), y(L * 3 * d);
  for (int t = 0; t < L; ++t)
    for (int c = 0; c < d; ++c) {
      x[t * 3 * d + c] = q[c];
      x[t * 3 * d + d + c] = k[c];
    }
  const std::vector<int> off = {0, L};
  std::vector<int> pos(L);
  for (int t = 0; t < L; ++t) pos[t] = t;
  CpuBackend<double>::rope_forward(y.data(), x.data(), table.cos.data(), table.sin.data(), d, H,
                                   ops::Seqs{off.data(), pos.data(), 1, L}, ops::Models{});
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

TEST_CASE("mse_loss: a non-finite prediction in a weight-0 (padding) row adds nothing") {
  const float pred[3] = {1.0f, INFINITY, NAN};
  const double target[3] = {0.5, 2.0, 3.0}, weight[3] = {1.0, 0.0, 0.0};
  float dpred[3] = {5, 5, 5};
  double loss = -1;
  cpu::mse_loss(dpred, &loss, pred, target, weight, 3);
  CHECK(loss == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(dpred[0] == doctest::Approx(1.0f));
  CHECK(dpred[1] == 0.0f);
  CHECK(dpred[2] == 0.0f);
}
