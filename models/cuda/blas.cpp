#include "models/cuda/blas.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <string>
#include <type_traits>

#include "models/cuda/check.hpp"

// Set by CMakeLists.txt from the toolkit the program was built with.
#ifndef LENLAB_CUBLAS_SONAME
#error "LENLAB_CUBLAS_SONAME (e.g. \"libcublas.so.13\") must be defined by the build"
#endif
#ifndef LENLAB_CUBLAS_PATH
#define LENLAB_CUBLAS_PATH ""
#endif

#define LENLAB_STRINGIFY_(x) #x
#define LENLAB_STRINGIFY(x) LENLAB_STRINGIFY_(x)  // expands first: cublasCreate → "cublasCreate_v2"

namespace lenlab::cuda {

namespace {

struct Loaded {
  Cublas api;
  bool ok = false;
  std::string why;
};

std::atomic<const Cublas*> g_loaded{nullptr};

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

Loaded load() {
  Loaded l;
  // RTLD_LOCAL: cuBLAS's symbols stay out of the global scope; the library is never closed.
  void* lib = dlopen(LENLAB_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.why = fmt::format("cannot load cuBLAS: {}", dl_error());
    // The toolkit's own copy, when the loader's search path does not reach it.
    const std::string path = LENLAB_CUBLAS_PATH;
    if (path.empty() || path == LENLAB_CUBLAS_SONAME) return l;
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      l.why += fmt::format("; {}", dl_error());
      return l;
    }
  }
  bool missing = false;
  auto resolve = [&](auto& fn, const char* name) {
    dlerror();
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn && !missing) {
      missing = true;
      l.why = fmt::format("cuBLAS ({}) lacks {}: {}", LENLAB_CUBLAS_SONAME, name, dl_error());
    }
  };
  resolve(l.api.create, LENLAB_STRINGIFY(cublasCreate));
  resolve(l.api.set_stream, LENLAB_STRINGIFY(cublasSetStream));
  resolve(l.api.sgemm_strided_batched, LENLAB_STRINGIFY(cublasSgemmStridedBatched));
  resolve(l.api.get_status_name, LENLAB_STRINGIFY(cublasGetStatusName));
  resolve(l.api.get_status_string, LENLAB_STRINGIFY(cublasGetStatusString));
  l.ok = !missing;
  return l;
}

}  // namespace

const Cublas* load_cublas(std::string* why) noexcept {
  try {
    static const Loaded loaded = load();
    if (loaded.ok) {
      g_loaded.store(&loaded.api, std::memory_order_release);
      return &loaded.api;
    }
    if (why) *why = loaded.why;
  } catch (...) {  // only std::bad_alloc could get here
    if (why) *why = "cannot load cuBLAS: out of memory";
  }
  return nullptr;
}

const Cublas* loaded_cublas() noexcept {
  return g_loaded.load(std::memory_order_acquire);
}

const Cublas& cublas() {
  std::string why;
  const Cublas* lib = load_cublas(&why);
  if (!lib) throw CudaError(why);
  return *lib;
}

cublasHandle_t blas_handle() {
  // One per thread: cuBLAS handles are not meant to be shared by threads issuing work at once.
  thread_local cublasHandle_t handle = [] {
    const Cublas* lib = &cublas();
    cublasHandle_t h = nullptr;
    // Named as cuBLAS names them, not as the pointers through which they are called.
    check_cublas(lib->create(&h), "cublasCreate(&h)", __FILE__, __LINE__);
    // The thread's own default stream, where its kernels go (CUDA_API_PER_THREAD_DEFAULT_STREAM).
    check_cublas(lib->set_stream(h, cudaStreamPerThread), "cublasSetStream(h, cudaStreamPerThread)",
                 __FILE__, __LINE__);
    return h;
  }();
  return handle;
}

}  // namespace lenlab::cuda
