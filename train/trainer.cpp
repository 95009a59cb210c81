#include "train/trainer.hpp"

#include <algorithm>

#include "models/cpu/backend.hpp"
#include "train/evaluate_impl.hpp"
#include "train/trainer_impl.hpp"

namespace lenlab {

double TrainOutcome::final_loss() const {
  if (log.empty()) return 0;
  const size_t n = std::min<size_t>(100, log.size());
  double sum = 0;
  for (size_t i = log.size() - n; i < log.size(); ++i) sum += log[i].loss;
  return sum / static_cast<double>(n);
}

// The CPU instantiations: float, and double for --precision float64 and the gradient checks.
template std::vector<TrainOutcome> train(Model<CpuBackend<float>>&, const std::vector<TrainJob>&,
                                         const std::function<void(int, int, double)>&,
                                         const StopCheck&);
template std::vector<std::vector<LengthResult>> evaluate(Model<CpuBackend<float>>&,
                                                         const std::vector<EvalJob>&,
                                                         const std::function<void(int, int)>&,
                                                         size_t);
template std::vector<TrainOutcome> train(Model<CpuBackend<double>>&, const std::vector<TrainJob>&,
                                         const std::function<void(int, int, double)>&,
                                         const StopCheck&);
template std::vector<std::vector<LengthResult>> evaluate(Model<CpuBackend<double>>&,
                                                         const std::vector<EvalJob>&,
                                                         const std::function<void(int, int)>&,
                                                         size_t);

}  // namespace lenlab
