#pragma once
// evaluate_parameters_on<B>: one model, its parameters given, evaluated on backend B (lenlab
// eval); generate_parameters_on<B> the same for lenlab generate; instantiated by lab/run/device.cpp
// for the CPU and lab/run/cuda/device_cuda.cpp for the GPU.
#include <functional>
#include <vector>

#include "models/model.hpp"
#include "train/evaluate.hpp"
#include "train/generate.hpp"

namespace lenlab {

template <class B>
std::vector<LengthResult> evaluate_parameters_on(const ModelConfig& config,
                                                 const std::vector<double>& params,
                                                 const EvalJob& job,
                                                 const std::function<void(int, int)>& on_length) {
  Model<B> model(config, 1);
  const std::vector<typename B::Scalar> p(params.begin(), params.end());
  model.set_parameters(0, p.data());
  return evaluate(model, {job}, on_length).front();
}

template <class B>
std::vector<int> generate_parameters_on(const ModelConfig& config,
                                        const std::vector<double>& params, const GenerateJob& job,
                                        const std::function<void(int)>& on_token) {
  Model<B> model(config, 1);
  const std::vector<typename B::Scalar> p(params.begin(), params.end());
  model.set_parameters(0, p.data());
  return generate(model, job, on_token);
}

}  // namespace lenlab
