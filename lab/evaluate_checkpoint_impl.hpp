#pragma once
// evaluate_checkpoint_on<B>: one model, its parameters given, evaluated on backend B; the CPU's
// instantiation is in lab/eval_run.cpp, the GPU's in lab/cuda/eval_run_cuda.cpp.
#include <functional>
#include <vector>

#include "models/model.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

template <class B>
std::vector<LengthResult> evaluate_checkpoint_on(const ModelConfig& config,
                                                 const std::vector<double>& params,
                                                 const EvalJob& job,
                                                 const std::function<void(int, int)>& on_length) {
  Model<B> model(config, 1);
  const std::vector<typename B::Scalar> p(params.begin(), params.end());
  model.set_parameters(0, p.data());
  return evaluate(model, {job}, on_length).front();
}

}  // namespace lenlab
