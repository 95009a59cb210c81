#include "models/cpu/blas_gemm.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "core/error.hpp"

#if LENLAB_WITH_OPENBLAS
#include <cblas.h>  // Debian's OpenBLAS, its OpenMP build (CMakeLists.txt)
#endif

namespace lenlab::cpu {

namespace {

std::string openblas_core() {
#if LENLAB_WITH_OPENBLAS
  const char* name = openblas_get_corename();
  return name ? name : "";
#else
  return "";
#endif
}

bool cpu_has(const char* feature) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (std::string(feature) == "avx2") return __builtin_cpu_supports("avx2");
  if (std::string(feature) == "avx512f") return __builtin_cpu_supports("avx512f");
#endif
  (void)feature;
  return false;
}

// The rule, unless LENLAB_GEMM names a kernel (eigen: the bits of runs made before OpenBLAS).
GemmKernel automatic_choice() {
  const char* env = std::getenv("LENLAB_GEMM");
  const std::string asked = env ? env : "";
  if (asked == "eigen") return GemmKernel::kEigen;
  if (asked == "openblas") {
#if LENLAB_WITH_OPENBLAS
    return GemmKernel::kOpenBlas;
#else
    throw UsageError(
        "LENLAB_GEMM=openblas, but this lenlab was built without OpenBLAS: install "
        "libopenblas-openmp-dev and rebuild, or set LENLAB_GEMM to auto or eigen");
#endif
  }
  if (!asked.empty() && asked != "auto")
    throw UsageError(fmt::format(
        "unknown LENLAB_GEMM '{}' (the environment variable choosing the CPU's float matrix "
        "products); choose one of 'auto', 'eigen' or 'openblas'",
        asked));
#if LENLAB_WITH_OPENBLAS
  if (blas_kernel_is_tuned(openblas_core(), cpu_has("avx2"), cpu_has("avx512f")))
    return GemmKernel::kOpenBlas;
#endif
  return GemmKernel::kEigen;
}

GemmKernel& chosen() {
  static GemmKernel kernel = automatic_choice();
  return kernel;
}

}  // namespace

bool blas_kernel_is_tuned(const std::string& core, bool has_avx2, bool has_avx512) {
  const std::string lower = [&] {
    std::string s = core;
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }();
  const bool avx512_kernel =
      lower == "skylakex" || lower == "cooperlake" || lower == "sapphirerapids";
  const bool avx2_kernel = avx512_kernel || lower == "haswell" || lower == "zen";
  if (has_avx512) return avx512_kernel;
  if (has_avx2) return avx2_kernel;
  return !lower.empty();  // an older core: OpenBLAS's own kernel for it is its best
}

GemmKernel gemm_kernel() {
  return chosen();
}

bool openblas_available() {
  return LENLAB_WITH_OPENBLAS != 0;
}

void set_gemm_kernel(GemmKernel kernel) {
#if !LENLAB_WITH_OPENBLAS
  if (kernel == GemmKernel::kOpenBlas)
    throw std::invalid_argument("this build has no OpenBLAS (libopenblas-openmp-dev)");
#endif
  chosen() = kernel == GemmKernel::kAuto ? automatic_choice() : kernel;
}

std::string gemm_kernel_description() {
#if LENLAB_WITH_OPENBLAS
  const std::string core = openblas_core();
  const bool tuned = blas_kernel_is_tuned(core, cpu_has("avx2"), cpu_has("avx512f"));
  std::string version = OPENBLAS_VERSION;  // " OpenBLAS 0.3.21 "
  version.erase(0, version.find_first_not_of(' '));
  version.erase(version.find_last_not_of(' ') + 1);
  const char* env = std::getenv("LENLAB_GEMM");
  const bool forced = env && (std::string(env) == "eigen" || std::string(env) == "openblas");
  return fmt::format("{} ({} kernel '{}': {} this core{}{})",
                     chosen() == GemmKernel::kOpenBlas ? "OpenBLAS sgemm" : "Eigen", version, core,
                     tuned ? "tuned for" : "not tuned for",
                     cpu_has("avx512f") ? ", which has AVX-512" : "",
                     forced ? fmt::format("; LENLAB_GEMM={}", env) : "");
#else
  return "Eigen (this build has no OpenBLAS: install libopenblas-openmp-dev and rebuild)";
#endif
}

void blas_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc) {
#if LENLAB_WITH_OPENBLAS
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
#else
  (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb,
      (void)beta, (void)C, (void)ldc;
  throw std::logic_error("blas_sgemm called in a build without OpenBLAS");
#endif
}

}  // namespace lenlab::cpu
