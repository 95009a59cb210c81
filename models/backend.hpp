#pragma once
// The thin dispatch between the model (written once, models/model.hpp) and a backend's
// operations: a backend is a type with the scalar it computes in, its buffer type, memory
// helpers, and every operation of models/ops/args.hpp's list forwarded to its namespace.
// CpuBackend<T> runs models/cpu (T = float for training, double for gradient checks);
// CudaBackend (models/cuda/backend.hpp, CUDA builds only) runs models/cuda in float.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "models/cpu/attention_infer.hpp"
#include "models/cpu/eigen_maps.hpp"
#include "models/cpu/embedding.hpp"
#include "models/cpu/gelu.hpp"
#include "models/cpu/layernorm.hpp"
#include "models/cpu/linear.hpp"
#include "models/cpu/loss.hpp"
#include "models/cpu/optimizer.hpp"
#include "models/cpu/prefix_noise.hpp"
#include "models/cpu/rope.hpp"

// Every operation a backend provides, by name; each backend forwards all of them.
#define LENLAB_BACKEND_OPS(X)                                                                    \
  X(linear_forward)                                                                              \
  X(linear_backward)                                                                             \
  X(layernorm_forward) X(layernorm_backward) X(gelu_forward) X(gelu_backward) X(add_inplace)     \
      X(embedding_forward) X(embedding_backward) X(prefix_noise_forward)                         \
          X(prefix_noise_backward) X(gather_rows_forward) X(gather_rows_backward)                \
              X(rope_forward) X(rope_backward) X(attention_forward) X(attention_backward)        \
                  X(attention_infer) X(mse_loss) X(cross_entropy_loss) X(pair_alignment_loss)    \
                      X(grad_norm) X(adamw_step)

namespace lenlab {

template <class T>
struct CpuBackend {
  using Scalar = T;
  template <class U>
  using Buffer = cpu::Buffer<U>;
  static constexpr bool kDevice = false;  // buffers live in host memory

  // Grows b to at least n elements (contents past the old size unspecified, as on a device).
  template <class U>
  static void reserve(Buffer<U>& b, size_t n) {
    if (b.size() < n) b.resize(n);
  }
  template <class U>
  static void upload(Buffer<U>& b, const U* host, size_t n) {
    reserve(b, n);
    std::copy_n(host, n, b.data());
  }
  // host [n] → dst [n], into memory b already holds.
  template <class U>
  static void upload_to(U* dst, const U* host, size_t n) {
    std::copy_n(host, n, dst);
  }
  template <class U>
  static void download(U* host, const U* src, size_t n) {
    std::copy_n(src, n, host);
  }
  template <class U>
  static void fill_zero(U* p, size_t n) {
    std::fill_n(p, n, U(0));
  }

#define LENLAB_CPU_DISPATCH(op)        \
  template <class... A>                \
  static void op(A&&... a) {           \
    cpu::op<T>(std::forward<A>(a)...); \
  }
  LENLAB_BACKEND_OPS(LENLAB_CPU_DISPATCH)
#undef LENLAB_CPU_DISPATCH
};

}  // namespace lenlab
