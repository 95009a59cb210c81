#pragma once
// evaluate_parameters_on<B>: one model, its parameters given, evaluated on backend B (lenlab
// eval); generate_parameters_on<B> and stream_parameters_on<B> the same for lenlab generate and
// lenlab eval --stream; instantiated by lab/run/device.cpp for the CPU and
// lab/run/cuda/device_cuda.cpp for the GPU.
#include <functional>
#include <memory>
#include <vector>

#include "models/model.hpp"
#include "train/evaluate.hpp"
#include "train/generate.hpp"
#include "train/stream_eval.hpp"

namespace lenlab {

// One model on backend B holding `params` (rounded to B's precision).
template <class B>
std::unique_ptr<Model<B>> model_with_parameters(const ModelConfig& config,
                                                const std::vector<double>& params) {
  auto model = std::make_unique<Model<B>>(config, 1);
  const std::vector<typename B::Scalar> p(params.begin(), params.end());
  model->set_parameters(0, p.data());
  return model;
}

template <class B>
std::vector<LengthResult> evaluate_parameters_on(const ModelConfig& config,
                                                 const std::vector<double>& params,
                                                 const EvalJob& job,
                                                 const std::function<void(int, int)>& on_length) {
  return evaluate(*model_with_parameters<B>(config, params), {job}, on_length).front();
}

template <class B>
std::vector<int> generate_parameters_on(const ModelConfig& config,
                                        const std::vector<double>& params, const GenerateJob& job,
                                        const std::function<void(int)>& on_token) {
  return generate(*model_with_parameters<B>(config, params), job, on_token);
}

template <class B>
void stream_parameters_on(const ModelConfig& config, const std::vector<double>& params,
                          const StreamJob& job,
                          const std::function<void(const StreamChunk&)>& on_chunk) {
  stream_cross_entropy(*model_with_parameters<B>(config, params), job, on_chunk);
}

}  // namespace lenlab
