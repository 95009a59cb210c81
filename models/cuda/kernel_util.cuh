#pragma once
// Device helpers shared by the CUDA backend's kernels (included by the .cu files only).
#include <cuda_runtime.h>

#include <cstddef>

namespace lenlab::cuda::detail {

inline constexpr int kThreads = 256;  // threads per block of the elementwise and row kernels

// Blocks for n items at `threads` per block, capped (the kernels loop grid-stride past the cap).
inline int blocks_for(size_t n, int threads = kThreads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<int>(b == 0 ? 1 : (b < 65535 * 16 ? b : 65535 * 16));
}

// Sums / maxima over the 32 lanes of a warp (float or double); every lane gets the result. All
// lanes must call.
template <class T>
__device__ inline T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <class T>
__device__ inline T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) {
    const T other = __shfl_xor_sync(0xffffffffu, v, o);
    v = other > v ? other : v;
  }
  return v;
}

// Sum of one double per thread over the block, in a fixed order (a tree over thread indices), so
// the result is the same in every run. shared: blockDim.x doubles; blockDim.x a power of two. All
// threads must call; every thread gets the total.
__device__ inline double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) shared[threadIdx.x] += shared[threadIdx.x + w];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // shared may be reused at once
  return total;
}

// The index of this thread in a 1-D grid, and the grid's size (for grid-stride loops).
__device__ inline size_t global_thread() {
  return blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
}
__device__ inline size_t grid_threads() {
  return static_cast<size_t>(gridDim.x) * blockDim.x;
}

}  // namespace lenlab::cuda::detail
