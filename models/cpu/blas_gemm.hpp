#pragma once
// The float matrix products of the linear layers through OpenBLAS's sgemm, where it has a kernel
// tuned for this core; Eigen's general product otherwise (and always in double, for the gradient
// checks). Why: on the linear layers' small, skinny shapes (a few hundred packed rows × 64..1024)
// OpenBLAS ran about 1.4× Eigen's general product, 1.2× BLIS and 2× libxsmm's JIT kernels (the
// numbered experiments and their figures: bench/small_gemm/README.md).
//
// Every product is row-major: C [M, N] = beta·C + op(A) · op(B), op = the matrix or its transpose.
#include <string>

namespace lenlab::cpu {

// Which kernel float products run on. kAuto: OpenBLAS when this build has it and its kernel for
// this core is a tuned one (see blas_kernel_is_tuned), else Eigen; the environment variable
// LENLAB_GEMM=eigen|openblas|auto overrides it (eigen gives the bits of runs made before
// OpenBLAS). The choice is made once per process from the core alone, so a run is deterministic
// for a fixed seed and thread count.
enum class GemmKernel { kAuto, kEigen, kOpenBlas };

// The kernel float products use now (kEigen or kOpenBlas; never kAuto). The first call reads
// LENLAB_GEMM: UsageError for a value other than auto, eigen, openblas (openblas in a build
// without it too), naming the choices.
GemmKernel gemm_kernel();
// Whether this build links OpenBLAS (kOpenBlas can be chosen, blas_sgemm called).
bool openblas_available();
// Forces a kernel for the whole process (benchmarks compare both in one run). kOpenBlas in a
// build without OpenBLAS throws std::invalid_argument. Not for use while products run.
void set_gemm_kernel(GemmKernel kernel);
// One line for benchmarks and run manifests: the kernel in use, and OpenBLAS's core name and
// whether it is tuned for this core.
std::string gemm_kernel_description();

// True when OpenBLAS's kernel `core` (openblas_get_corename()) is tuned for a core with these
// vector units. Debian's OpenBLAS falls back to an older kernel on cores it does not know (an
// Intel family 6 model 207 core, as issue 39 reports it: 33 GFLOP/s by default, 155 with
// SkylakeX's kernel),
// and its AVX2 kernels leave a core's AVX-512 units idle where Eigen's -march=native code uses
// them.
bool blas_kernel_is_tuned(const std::string& core, bool has_avx2, bool has_avx512);

// C [M, N] = beta·C + op(A) · op(B) through OpenBLAS (gemm_kernel() must be kOpenBlas).
// op(A) is [M, K]: A [M, K] (lda ≥ K) or, with trans_a, A [K, M] (lda ≥ M); likewise op(B).
void blas_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc);

}  // namespace lenlab::cpu
