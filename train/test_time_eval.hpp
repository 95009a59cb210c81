#pragma once
// A trained model's evaluation with its test-time attention (train/test_time_attention.hpp): the
// one place `lenlab eval` and a run's own evaluation (lab/run_group_impl.hpp) set it up, so that
// both evaluate a Λ-mask, a cap or a temperature the same way.
#include <functional>
#include <map>
#include <vector>

#include "train/evaluate.hpp"
#include "train/test_time_attention.hpp"

namespace lenlab {

// Evaluates one job on the trained model (on whatever backend holds it).
using EvaluateJob = std::function<std::vector<LengthResult>(const EvalJob&)>;

// Paper 002's Algorithm 1 at every length of `base` past l_train: the grid's temperature whose
// mean attention statistic (over layers, heads and query rows) is nearest the model's at l_train
// with τ = 1, measured on the first kTemperatureSearchSamples test sequences of each length (the
// same for every τ).
std::map<int, double> search_temperatures(AlignBy by, const EvalJob& base, int l_train,
                                          const EvaluateJob& run);

// Sets job.attention from spec.test_attention (UsageError as test_time_attention says), and
// job.attention_stats when it asks for the statistics. With an
// auto temperature, searches it per length past spec.l_train through `run` and sets
// job.attention.logit_scale_by_length (indexed by a sequence's tokens); returns the τ per length
// (empty without an auto temperature).
std::map<int, double> prepare_test_time_eval(EvalJob& job, const TrainSpec& spec,
                                             PositionalEncoding pe, const EvaluateJob& run);

}  // namespace lenlab
