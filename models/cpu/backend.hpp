#pragma once
// The CPU backend of the model written once (models/model.hpp): host buffers, memory helpers, and
// every operation of models/ops/op_list.hpp forwarded to models/cpu, in T = float for training or
// double for gradient checks. CudaBackend (models/cuda/backend.hpp, CUDA builds only) is the
// same for models/cuda, in float.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "models/ops/op_list.hpp"

#include "models/cpu/attention.hpp"
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

namespace lenlab {

// The CPU runs every training step as it is; CudaBackend's StepGraphs (models/cuda/
// step_graphs.hpp) may replay one as a CUDA graph. The same calls on both.
struct EagerSteps {
  explicit EagerSteps(bool /*enabled*/) {}
  bool enabled() const { return false; }
  template <class Key, class Step>
  void run(const Key& /*key*/, Step&& step) {
    step();
  }
};

template <class T>
struct CpuBackend {
  using Scalar = T;
  template <class U>
  using Buffer = cpu::Buffer<U>;
  static constexpr bool kDevice = false;  // buffers live in host memory
  using StepGraphs = EagerSteps;

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
