// The backend test table (tests/models/backend_cases.hpp) on the GPU, one test case per op: every
// row on CudaBackend against CpuBackend<double>, within the row's tolerance (the largest difference
// of every output printed), then the row's property checks and equivalent rows on CudaBackend.
// Without a GPU the program skips them all (tests/cuda/main.cpp).
#include <doctest/doctest.h>

#include "models/cuda/backend.hpp"
#include "tests/models/backend_runner.hpp"

using namespace lenlab;
using namespace lenlab::test;

#define LENLAB_CUDA_OP_TEST(op)              \
  TEST_CASE("backend ops on CUDA: " #op) {   \
    check_backend<CudaBackend>(#op, "cuda"); \
  }
LENLAB_CASE_OPS(LENLAB_CUDA_OP_TEST)
#undef LENLAB_CUDA_OP_TEST
