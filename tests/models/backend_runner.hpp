#pragma once
// Runs the backend test table (tests/backend_cases.hpp):
// * check_reference(op): every row of op on CpuBackend<double>, the reference: its property
//   checks, its equivalent rows, and every gradient against central finite differences of
//   L = Σ out ⊙ R (the backward's own upstream R), relative error ≤ kFdTol.
// * check_backend<B>(op, name): every row of op on backend B against CpuBackend<double>,
//   |x − ref| ≤ tol.abs + |ref|·tol.rel for every output and gradient (the largest difference is
//   always printed), then the row's property checks and equivalent rows on B.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <variant>

#include "models/cpu/backend.hpp"
#include "tests/models/backend_cases.hpp"
#include "tests/support/expect_close.hpp"
#include "tests/support/gradcheck.hpp"

namespace lenlab::test {

using Reference = CpuBackend<double>;

// Central differences with h = 1e-5 in double: truncation ~h² and roundoff ~1e-16/h are both far
// below this for the smooth ops of the table.
inline constexpr double kFdTol = 1e-6;

template <class C>
void run_checks(const C& c, const Host& h, const Outputs& o, const Where& w) {
  if constexpr (requires { c.check(h, o, w); }) c.check(h, o, w);
}

// The row's equivalent rows on backend B must give the same outputs as `base` (B's own run of the
// row): within the equivalence's tolerance on the reference, within the row's on other backends.
template <class B, class C>
void run_equivalents(const C& c, const Host& h, const Outputs& base, const Where& w) {
  if constexpr (requires { c.equivalents(); })
    for (const auto& [e, tol] : c.equivalents()) {
      const Outputs o = e.template run<B>(h);
      for (const auto& [name, v] : base.list)
        expect_close(w.backend + " " + c.name() + " ≡ " + e.name() + " " + name, o.get(name), v,
                     w.reference ? tol : c.tol.abs, w.reference ? tol : c.tol.rel);
    }
}

template <class C>
void check_finite_differences(const C& c, const Host& h0, const Outputs& base) {
  Host h = h0;
  auto loss = [&] {
    const Outputs o = c.template run<Reference>(h);
    double L = 0;
    for (const LossTerm& t : h.loss) L += dot(o.get(t.output), h.r(t.upstream));
    return L;
  };
  for (const GradOf& g : h0.grads) {
    std::vector<double> analytic = base.get(g.output);
    // Every backward adds into its gradient buffers: what it added is the gradient.
    if (!g.prefill.empty())
      for (size_t i = 0; i < analytic.size(); ++i) analytic[i] -= h0.r(g.prefill)[i];
    const std::string what = c.name() + " " + g.output;
    const double rel = check_gradient(what, h.real.at(g.input), analytic, loss, kFdTol);
    std::printf("  %-72s finite differences: relative error %.2e\n", what.c_str(), rel);
  }
}

// Calls f(row) for every row of op; requires at least one (an unknown op name is a typo).
template <class F>
void for_rows(const std::string& op, F&& f) {
  int n = 0;
  for (const Case& row : backend_cases())
    std::visit(
        [&](const auto& c) {
          if (c.op() != op) return;
          ++n;
          INFO("row: " << c.name());
          f(c);
        },
        row);
  REQUIRE_MESSAGE(n > 0, "no rows for op " << op);
}

inline void check_reference(const std::string& op) {
  const Where w{"cpu double", true, false};
  int with_backward = 0, checked = 0;
  for_rows(op, [&](const auto& c) {
    const Host h = c.make();
    const Outputs o = c.template run<Reference>(h);
    run_checks(c, h, o, w);
    run_equivalents<Reference>(c, h, o, w);
    if (h.grads.empty()) return;  // no backward (attention_infer, add_inplace, the optimizer)
    ++with_backward;
    if (!c.fd) return;  // a large row: its small twins are checked
    ++checked;
    check_finite_differences(c, h, o);
  });
  const bool covered = checked > 0 || with_backward == 0;
  CHECK_MESSAGE(covered, op << " has a backward but no row checks it by finite differences");
}

template <class B>
void check_backend(const std::string& op, const std::string& backend) {
  const Where w{backend, false, B::kDevice};
  for_rows(op, [&](const auto& c) {
    const Host h = c.make();
    const Outputs ref = c.template run<Reference>(h);
    const Outputs got = c.template run<B>(h);
    REQUIRE(got.list.size() == ref.list.size());
    for (size_t i = 0; i < ref.list.size(); ++i) {
      const auto& [name, v] = ref.list[i];
      REQUIRE(got.list[i].first == name);
      REQUIRE(got.list[i].second.size() == v.size());
      expect_close(backend + " " + c.name() + " " + name, got.list[i].second, v, c.tol.abs,
                   c.tol.rel);
    }
    run_checks(c, h, got, w);
    run_equivalents<B>(c, h, got, w);
  });
}

}  // namespace lenlab::test
