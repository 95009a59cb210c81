#include "train/test_time_eval.hpp"

#include <algorithm>

namespace lenlab {

std::map<int, double> search_temperatures(AlignBy by, const EvalJob& base, int l_train,
                                          const EvaluateJob& run) {
  const auto statistic = [&](int length, double tau) {
    EvalJob j = base;
    j.lengths = {length};
    j.eval_samples = std::min(base.eval_samples, kTemperatureSearchSamples);
    j.attention_stats = true;
    j.attention.logit_scale = 1.0 / tau;
    j.attention.logit_scale_by_length.clear();
    j.on_output = {};
    j.on_token_output = {};
    double sum = 0;  // passkey: the mean over its depth cells
    const std::vector<LengthResult> cells = run(j);
    for (const LengthResult& r : cells) sum += mean_statistic(r.attention, by);
    return sum / static_cast<double>(cells.size());
  };
  const double target = statistic(l_train, 1.0);
  std::map<int, double> out;
  for (const int length : base.lengths)
    if (length > l_train)
      out[length] = closest_temperature(
          temperature_grid(), [&](double tau) { return statistic(length, tau); }, target);
  return out;
}

std::map<int, double> prepare_test_time_eval(EvalJob& job, const TrainSpec& spec,
                                             PositionalEncoding pe, const EvaluateJob& run) {
  job.attention = test_time_attention(spec.test_attention, spec, pe);
  if (spec.test_attention.attention_stats == 1) job.attention_stats = true;
  const std::optional<AlignBy> by = temperature_alignment(spec.test_attention);
  if (!by || job.lengths.empty()) return {};
  const std::map<int, double> temperatures = search_temperatures(*by, job, spec.l_train, run);
  const TaskKind task = parse_task(spec.task);
  std::vector<double> scale(tokens_per_sequence(task, spec.token, job.lengths.back()) + 1, 1.0);
  for (const auto& [length, tau] : temperatures)
    scale[tokens_per_sequence(task, spec.token, length)] = 1.0 / tau;
  job.attention.logit_scale_by_length = scale;
  return temperatures;
}

}  // namespace lenlab
