// libFuzzer target: reparam expressions (muparser), used the way a run uses them. The input is
// split at its first two '\n' bytes into the expression f, the inverse expression (may be empty)
// and the shift c (text read by strtod; empty means 0):
//
//   x^-0.5\n\n1     f = x^-0.5, numerical inverse, shift 1
//
// Reparam::make, then for the targets of three tasks (length 1..20, sum 0..20, mean k/l for
// l <= 10) check_domain, and when it accepts, forward at every target and inverse at those
// values and at a few awkward points (0, +-1e300, +-inf, NaN).
//
// A UsageError from make or check_domain is the expected answer to a bad expression. Anything else
// is a finding: a crash, a sanitizer report, another exception type (libFuzzer reports an escaping
// exception as a deadly signal), a hang, or a broken documented promise, checked here: after
// check_domain accepts, f is finite at every target, and the numerical inverse never returns NaN.
//
// Also replayed over fuzz/corpus/expression/ by the normal test suite (fuzz/replay_main.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"

namespace {

// Reports a broken promise and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] void finding(const char* what, const lenlab::Reparam& r, double at, double got) {
  std::fprintf(stderr,
               "fuzz_expression: %s (reparam '%s', inverse '%s', shift %.17g) at %.17g: %.17g\n",
               what, r.spec().c_str(), r.inverse_spec().c_str(), r.shift(), at, got);
  std::abort();
}

// Splits off the text up to the next '\n' (all of it when there is none).
std::string next_field(std::string& rest) {
  const size_t nl = rest.find('\n');
  std::string field = rest.substr(0, nl);
  rest = nl == std::string::npos ? std::string() : rest.substr(nl + 1);
  return field;
}

struct TargetSet {
  const char* task;
  std::vector<double> targets;
};

const std::vector<TargetSet>& target_sets() {
  static const std::vector<TargetSet> sets = {
      {"length", lenlab::task_target_values(lenlab::TaskKind::kLength, 1, 20)},
      {"sum", lenlab::task_target_values(lenlab::TaskKind::kSum, 1, 20)},
      {"mean", lenlab::task_target_values(lenlab::TaskKind::kMean, 1, 10)},
  };
  return sets;
}

void exercise(lenlab::Reparam r, const TargetSet& set) {
  try {
    r.check_domain(set.targets, set.task);
  } catch (const lenlab::UsageError&) {
    return;
  }
  const bool numerical = r.uses_numerical_inverse();
  auto check_inverse = [&](double z) {
    bool clamped = true;
    const double y = r.inverse(z, &clamped);
    if (numerical && std::isnan(y)) finding("numerical inverse returned NaN", r, z, y);
    if (!numerical && clamped) finding("closed-form inverse reported clamping", r, z, y);
  };
  for (const double y : set.targets) {
    const double z = r.forward(y);
    if (!std::isfinite(z)) finding("f not finite at a target check_domain accepted", r, y, z);
    check_inverse(z);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const double z :
       {0.0, 1.0, -1.0, 1e300, -1e300, kInf, -kInf, std::numeric_limits<double>::quiet_NaN()})
    check_inverse(z);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string rest(reinterpret_cast<const char*>(data), size);
  const std::string spec = next_field(rest);
  const std::string inverse_spec = next_field(rest);
  const std::string shift_text = next_field(rest);
  const double shift = shift_text.empty() ? 0.0 : std::strtod(shift_text.c_str(), nullptr);
  std::optional<lenlab::Reparam> made;
  try {
    made.emplace(lenlab::Reparam::make(spec, inverse_spec, shift));
  } catch (const lenlab::UsageError&) {
    return 0;
  }
  // Each task on its own copy, as each run of a sweep gets its own (copies re-parse the text).
  for (const TargetSet& set : target_sets()) exercise(*made, set);
  return 0;
}
