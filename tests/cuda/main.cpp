// The CUDA parity suite. Without a usable GPU every case is skipped with a one-line reason: the
// program prints it and exits 77, which ctest reports as "Skipped" (SKIP_RETURN_CODE). Listing the
// cases (what ctest's discovery does at build time) works without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "models/cuda/device.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::strstr(argv[i], "list") || std::strcmp(argv[i], "-ltc") == 0 ||
        std::strcmp(argv[i], "-h") == 0 || std::strstr(argv[i], "help"))
      listing = true;
  const lenlab::cuda::DeviceInfo& gpu = lenlab::cuda::device_info();
  if (!listing) {
    if (!gpu.available) {
      std::printf("SKIPPED (no GPU): %s\n", gpu.reason.c_str());
      return 77;
    }
    std::printf("CUDA parity tests on %s, %d multiprocessors, %.1f GiB\n", gpu.label().c_str(),
                gpu.multiprocessors, gpu.memory_gib);
  }
  doctest::Context context(argc, argv);
  return context.run();
}
