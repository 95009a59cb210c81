#pragma once
// A training step replayed as a CUDA graph. A default model's step is 55 operations, some of
// them more than one launch, and on a GPU one model (K = 1) is bound by launching them, not by
// their work. With LENLAB_CUDA_GRAPHS=1 (models/step_capture.hpp) the trainer hands its step's
// device work to run() with a key of every size the step's launches depend on
// (PackedBatch::shape_key, Model::table_sizes): a key seen before is replayed as one graph
// launch; a new key runs once as it is (so that every buffer it needs is allocated outside a
// capture) and is captured on its second sighting. The graph runs the same kernels with the same
// arguments in the same order, so a replayed step gives the same bits as the step it replaces
// (tests/cuda/test_cuda_training.cpp). Data that change between steps (tokens, positions,
// targets, learning rates) live in device buffers the step reads, uploaded before it. Without the
// variable, or for a model whose step makes a host round trip (a learned positional bias, whose
// tables are rebuilt on the host), every step runs as it is.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace lenlab::cuda {

struct StepGraphCounts {
  long eager = 0;     // steps launched operation by operation
  long captured = 0;  // graphs captured (each also replayed at once)
  long replayed = 0;  // steps run as a graph launch, captures included
  long failed = 0;    // captures the runtime refused (the step then ran as it is)
};

// This thread's counts over every StepGraphs so far (for tests and benchmarks).
StepGraphCounts& thread_step_graph_counts();

class StepGraphs {
 public:
  using Key = std::vector<int64_t>;
  // enabled: replay where possible; false: run() runs every step as it is.
  explicit StepGraphs(bool enabled) : enabled_(enabled) {}
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  bool enabled() const { return enabled_; }
  // Runs step (device work only on this thread's default stream: no allocation, no host copy, no
  // synchronisation), as a graph where the key allows. A capture the runtime refuses (another
  // thread's cudaFree or cudaMalloc on the same GPU ends every capture in flight) leaves nothing
  // run: the step then runs as it is, and after kMaxFailures such refusals every step does.
  void run(const Key& key, const std::function<void()>& step);

 private:
  // At most this many graphs are kept (each holds driver memory); keys past it run as they are.
  static constexpr size_t kMaxGraphs = 512;
  static constexpr int kMaxFailures = 8;
  void drop_graphs();
  // The step captured and instantiated; null when the runtime refused the capture.
  cudaGraphExec_t capture(const std::function<void()>& step);

  bool enabled_ = false;
  int failures_ = 0;
  uint64_t allocations_ = 0;  // thread_allocations() when the kept graphs were captured
  std::map<Key, cudaGraphExec_t> graphs_;
  std::set<Key> seen_;  // keys run once as they are: their buffers exist
};

}  // namespace lenlab::cuda
