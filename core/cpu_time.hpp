#pragma once
// The calling thread's CPU time (user and system), in seconds. Work that runs on the calling
// thread alone (one OpenMP and Eigen thread, which OpenBLAS's OpenMP build follows) is timed by it
// at this core's speed however busy the machine is; the clock would time its share of the core.
// The dry run's rates (cost/time_model.cpp) and lenlab_bench's passes are timed this way.
#include <ctime>

namespace lenlab {

inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The calling thread's CPU seconds since `start`, a thread_cpu_seconds() reading.
inline double cpu_seconds_since(double start) {
  return thread_cpu_seconds() - start;
}

}  // namespace lenlab
