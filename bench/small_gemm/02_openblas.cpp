// Experiment 02, the winner: OpenBLAS's cblas_sgemm (Debian's libopenblas, the OpenMP build lenlab
// links), which picks its kernel for the core at run time.
#include "bench/small_gemm/cblas_candidate.hpp"

int main() {
  return small_gemm::run(small_gemm::cblas_candidate("02 OpenBLAS cblas_sgemm"));
}
