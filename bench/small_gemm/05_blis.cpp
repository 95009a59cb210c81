// Experiment 05: BLIS (Debian's libblis-openmp-dev, its CBLAS interface, whose cblas.h CMake puts
// first on the include path), which picks its kernel for the core at run time.
#include "bench/small_gemm/cblas_candidate.hpp"

int main() {
  return small_gemm::run(small_gemm::cblas_candidate("05 BLIS cblas_sgemm"));
}
