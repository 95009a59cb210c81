#include "train/test_time_eval.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace lenlab {

namespace {

// Layer 0's statistics over a length's cells (passkey: its depths): (σ, mean largest probability),
// each the mean over heads; σ² the mean of the heads' row variances.
std::pair<double, double> layer0_spread(const std::vector<LengthResult>& cells) {
  double var = 0, p = 0;
  for (const LengthResult& r : cells) {
    const int H = r.attention.n_head;
    for (int h = 0; h < H; ++h) {
      var += r.logits.logit_var.at(h) / H;
      p += r.attention.max_prob.at(h) / H;
    }
  }
  const double n = static_cast<double>(cells.size());
  return {std::sqrt(var / n), p / n};
}

}  // namespace

TemperatureChoice search_temperatures(AlignBy by, const EvalJob& base, int l_train,
                                      const EvaluateJob& run) {
  const auto cells_at = [&](int length, double tau) {
    EvalJob j = base;
    j.lengths = {length};
    j.eval_samples = std::min(base.eval_samples, kTemperatureSearchSamples);
    j.attention_stats = true;
    j.attention_logits = tau == 1.0;  // the closed forms' σ, at τ = 1 only
    j.attention.logit_scale = 1.0 / tau;
    j.attention.logit_scale_by_length.clear();
    j.on_output = {};
    j.on_token_output = {};
    return run(j);
  };
  const auto statistic = [&](const std::vector<LengthResult>& cells) {
    double sum = 0;  // passkey: the mean over its depth cells
    for (const LengthResult& r : cells) sum += mean_statistic(r.attention, by);
    return sum / static_cast<double>(cells.size());
  };
  const auto tokens = [&](int length) {
    return static_cast<double>(tokens_per_sequence(
        base.task, base.token_settings ? *base.token_settings : TokenTaskSettings{}, length));
  };
  const std::vector<LengthResult> at_train = cells_at(l_train, 1.0);
  const double target = statistic(at_train);
  const auto [sigma_train, p_train] = layer0_spread(at_train);
  TemperatureChoice out;
  for (const int length : base.lengths) {
    if (length <= l_train) continue;
    const std::vector<LengthResult> plain = cells_at(length, 1.0);
    const double sigma = layer0_spread(plain).first;
    out.pmax_closed_form[length] =
        temperature_pmax_closed_form(p_train, tokens(l_train), tokens(length), sigma_train, sigma);
    out.entropy_closed_form[length] =
        temperature_entropy_closed_form(tokens(l_train), tokens(length), sigma_train, sigma);
    out.searched[length] = closest_temperature(
        temperature_grid(),
        [&](double tau) {
          return tau == 1.0 ? statistic(plain) : statistic(cells_at(length, tau));
        },
        target);
  }
  return out;
}

nlohmann::ordered_json closed_form_json(const TemperatureChoice& t) {
  const auto by_length = [](const std::map<int, double>& m) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [length, tau] : m)
      j[std::to_string(length)] = std::isfinite(tau) ? nlohmann::ordered_json(tau) : nullptr;
    return j;
  };
  return {{"proposition_1_pmax", by_length(t.pmax_closed_form)},
          {"proposition_2_entropy", by_length(t.entropy_closed_form)}};
}

TemperatureChoice prepare_test_time_eval(EvalJob& job, const TrainSpec& spec, PositionalEncoding pe,
                                         const EvaluateJob& run) {
  job.attention = test_time_attention(spec.test_attention, spec, pe);
  if (spec.test_attention.attention_stats == 1) job.attention_stats = true;
  job.attention_logits = job.attention_stats;
  const std::optional<AlignBy> by = temperature_alignment(spec.test_attention);
  if (!by || job.lengths.empty()) return {};
  TemperatureChoice temperatures = search_temperatures(*by, job, spec.l_train, run);
  const TaskKind task = parse_task(spec.task);
  std::vector<double> scale(tokens_per_sequence(task, spec.token, job.lengths.back()) + 1, 1.0);
  for (const auto& [length, tau] : temperatures.searched)
    scale[tokens_per_sequence(task, spec.token, length)] = 1.0 / tau;
  job.attention.logit_scale_by_length = scale;
  return temperatures;
}

}  // namespace lenlab
