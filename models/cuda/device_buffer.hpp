#pragma once
// Device memory owned like a std::vector (cudaMalloc / cudaFree), with explicit host copies.
// Sizes only grow (reserve_at_least), like the CPU backend's activation buffers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/cuda/check.hpp"

namespace lenlab::cuda {

// How many device buffers this thread has allocated so far. A captured CUDA graph holds the
// addresses of the buffers its step used (models/cuda/step_graphs.hpp): when this count moves,
// some buffer may have moved, and graphs captured before are dropped.
inline uint64_t& thread_allocations() {
  thread_local uint64_t n = 0;
  return n;
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { reserve_at_least(n); }
  explicit DeviceBuffer(const std::vector<T>& host) { upload(host.data(), host.size()); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return n_; }

  // Grows to at least n elements; contents are lost when it grows.
  void reserve_at_least(size_t n) {
    if (n <= n_) return;
    // A step being captured must not allocate: its graph would keep the address of a buffer it
    // frees here. StepGraphs runs a step's shape once without capture first, so this is a bug.
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(cudaStreamPerThread, &capturing) == cudaSuccess &&
        capturing != cudaStreamCaptureStatusNone)
      throw std::logic_error(
          "a device buffer grew while a training step was captured as a CUDA graph (the step's "
          "shape key misses a size): unset LENLAB_CUDA_GRAPHS");
    ++thread_allocations();
    release();
    LENLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    n_ = n;
  }
  void zero() {
    if (n_) LENLAB_CUDA_CHECK(cudaMemset(ptr_, 0, n_ * sizeof(T)));
  }
  // Grows if needed and copies host [n] to the start of the buffer.
  void upload(const T* host, size_t n) {
    reserve_at_least(n);
    if (n) LENLAB_CUDA_CHECK(cudaMemcpy(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  // The first n elements, copied to the host.
  std::vector<T> download(size_t n) const {
    std::vector<T> host(n);
    if (n) LENLAB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  std::vector<T> download() const { return download(n_); }

 private:
  void release() {
    if (ptr_) cudaFree(ptr_);  // no check: called from the destructor
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace lenlab::cuda
