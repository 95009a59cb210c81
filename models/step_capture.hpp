#pragma once
// Whether the GPU trainer may capture its training steps as CUDA graphs and replay them
// (models/cuda/step_graphs.hpp): the environment variable LENLAB_CUDA_GRAPHS, read here so that
// its check is the same in every build and testable without a GPU.
namespace lenlab {

// LENLAB_CUDA_GRAPHS's value: unset, "" or "0" → false; "1" → true. Anything else, or "1" with
// LENLAB_CUDA_SYNC=1 (which waits for every kernel, a call a captured step may not make), throws
// UsageError naming the value and the valid choices. Arguments: the two variables' values (null:
// unset).
bool parse_cuda_graphs_setting(const char* graphs, const char* sync);

// The same for this process's environment.
bool cuda_graphs_requested();

}  // namespace lenlab
