// `lenlab eval` on the GPU: the checkpoint's model as a Model<CudaBackend> of one.
#include "lab/eval_run.hpp"
#include "lab/evaluate_checkpoint_impl.hpp"
#include "models/cuda/backend.hpp"

namespace lenlab {

std::vector<LengthResult> evaluate_checkpoint_gpu(const ModelConfig& model,
                                                  const std::vector<double>& params,
                                                  const EvalJob& job,
                                                  const std::function<void(int, int)>& on_length) {
  return evaluate_checkpoint_on<CudaBackend>(model, params, job, on_length);
}

}  // namespace lenlab
