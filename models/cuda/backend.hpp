#pragma once
// The CUDA backend for the model written once (models/model.hpp): device buffers, host copies and
// models/cuda's operations, behind the same names as CpuBackend (models/cpu/backend.hpp).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "models/cuda/check.hpp"
#include "models/cuda/device_buffer.hpp"
#include "models/cuda/ops.hpp"
#include "models/cuda/step_graphs.hpp"
#include "models/ops/op_list.hpp"

namespace lenlab {

struct CudaBackend {
  using Scalar = float;
  template <class U>
  using Buffer = cuda::DeviceBuffer<U>;
  static constexpr bool kDevice = true;
  // A training step's device work, replayed as a CUDA graph where LENLAB_CUDA_GRAPHS=1 allows.
  using StepGraphs = cuda::StepGraphs;

  template <class U>
  static void reserve(Buffer<U>& b, size_t n) {
    b.reserve_at_least(n);
  }
  template <class U>
  static void upload(Buffer<U>& b, const U* host, size_t n) {
    b.upload(host, n);
  }
  template <class U>
  static void upload_to(U* dst, const U* host, size_t n) {
    if (n) LENLAB_CUDA_CHECK(cudaMemcpy(dst, host, n * sizeof(U), cudaMemcpyHostToDevice));
  }
  template <class U>
  static void download(U* host, const U* src, size_t n) {
    if (n) LENLAB_CUDA_CHECK(cudaMemcpy(host, src, n * sizeof(U), cudaMemcpyDeviceToHost));
  }
  template <class U>
  static void fill_zero(U* p, size_t n) {
    if (n) LENLAB_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(U)));
  }

#define LENLAB_CUDA_DISPATCH(op)     \
  template <class... A>              \
  static void op(A&&... a) {         \
    cuda::op(std::forward<A>(a)...); \
  }
  LENLAB_BACKEND_OPS(LENLAB_CUDA_DISPATCH)
#undef LENLAB_CUDA_DISPATCH
};

}  // namespace lenlab
