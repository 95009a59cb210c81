// The trainer and the evaluator on the GPU: K runs at once as one batched computation.
#include "models/cuda/backend.hpp"
#include "train/evaluate_impl.hpp"
#include "train/trainer_impl.hpp"

namespace lenlab {

template std::vector<TrainOutcome> train(Model<CudaBackend>&, const std::vector<TrainJob>&,
                                         const std::function<void(int, int, double)>&,
                                         const StopCheck&);
template std::vector<std::vector<LengthResult>> evaluate(Model<CudaBackend>&,
                                                         const std::vector<EvalJob>&,
                                                         const std::function<void(int, int)>&,
                                                         size_t);

}  // namespace lenlab
