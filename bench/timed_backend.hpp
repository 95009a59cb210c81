#pragma once
// A backend that times every operation of another one (models/cpu/backend.hpp's
// LENLAB_BACKEND_OPS), for the benchmark's per-op breakdown: Model<TimedBackend<CpuBackend<float>>>
// trains exactly as the CPU model does (the same code, the same numbers) while each operation's
// calls and seconds are added up by name. The clock reads cost tens of nanoseconds against
// operations of microseconds; memory helpers (reserve, upload, fill_zero, …) are not operations and
// are left in "the rest" of a step.
#include <chrono>
#include <map>
#include <string>
#include <utility>

#include "models/cpu/backend.hpp"

namespace lenlab {

struct OpTally {
  long calls = 0;
  double seconds = 0;
};

// Every timed operation's tally, by name (one thread: the benchmark runs on one core).
inline std::map<std::string, OpTally>& op_tallies() {
  static std::map<std::string, OpTally> tallies;
  return tallies;
}

template <class Base>
struct TimedBackend : Base {
#define LENLAB_TIMED_DISPATCH(op)                                                                 \
  template <class... A>                                                                           \
  static void op(A&&... a) {                                                                      \
    const auto start = std::chrono::steady_clock::now();                                          \
    Base::op(std::forward<A>(a)...);                                                              \
    OpTally& t = op_tallies()[#op];                                                               \
    ++t.calls;                                                                                    \
    t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); \
  }
  LENLAB_BACKEND_OPS(LENLAB_TIMED_DISPATCH)
#undef LENLAB_TIMED_DISPATCH
};

}  // namespace lenlab
