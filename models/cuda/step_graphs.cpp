#include "models/cuda/step_graphs.hpp"

#include "models/cuda/check.hpp"
#include "models/cuda/device_buffer.hpp"

namespace lenlab::cuda {

StepGraphCounts& thread_step_graph_counts() {
  thread_local StepGraphCounts counts;
  return counts;
}

StepGraphs::~StepGraphs() {
  drop_graphs();
}

void StepGraphs::drop_graphs() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);  // no check: from a destructor
  graphs_.clear();
}

cudaGraphExec_t StepGraphs::capture(const std::function<void()>& step) {
  // Thread-local mode: this thread may not make a call that is unsafe during a capture (a
  // synchronous copy, an allocation); the runtime refuses it and ends the capture. Other threads
  // (other groups of runs) go on as they are.
  LENLAB_CUDA_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  bool refused = false;
  try {
    step();
  } catch (const CudaError&) {  // a launch into a capture the runtime ended
    refused = true;
  } catch (...) {  // not the runtime's doing (a buffer that grew): a bug, reported as it is
    cudaStreamEndCapture(cudaStreamPerThread, &graph);  // leaves the stream usable
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  const cudaError_t ended = cudaStreamEndCapture(cudaStreamPerThread, &graph);
  if (refused || ended != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // the refusal is not sticky: clear it for the step run as it is
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  LENLAB_CUDA_CHECK(made);
  return exec;
}

void StepGraphs::run(const Key& key, const std::function<void()>& step) {
  StepGraphCounts& counts = thread_step_graph_counts();
  auto as_it_is = [&] {
    step();
    ++counts.eager;
  };
  if (!enabled_ || failures_ >= kMaxFailures) return as_it_is();
  if (thread_allocations() != allocations_) {  // a buffer may have moved since the captures
    drop_graphs();
    allocations_ = thread_allocations();
  }
  auto kept = graphs_.find(key);
  if (kept == graphs_.end()) {
    // A first sighting, or no room: as it is (allocating what this shape needs).
    if (seen_.insert(key).second || graphs_.size() >= kMaxGraphs) return as_it_is();
    cudaGraphExec_t exec = capture(step);
    if (!exec) {  // nothing of the step ran
      ++failures_;
      ++counts.failed;
      return as_it_is();
    }
    kept = graphs_.emplace(key, exec).first;
    ++counts.captured;
  }
  LENLAB_CUDA_CHECK(cudaGraphLaunch(kept->second, cudaStreamPerThread));
  ++counts.replayed;
}

}  // namespace lenlab::cuda
