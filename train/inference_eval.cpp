#include "train/inference_eval.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/position_bias.hpp"
#include "train/untrained_bias.hpp"

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

// The task's metrics over a length's cells (passkey: the mean over its depths), by the names of
// results/figure_metric.hpp.
std::map<std::string, double> curve_metrics(const std::vector<LengthResult>& cells) {
  std::map<std::string, double> m;
  const double n = static_cast<double>(cells.size());
  for (const LengthResult& r : cells) {
    if (!r.token) {
      m["mse"] += r.mse / n;
      continue;
    }
    m["token_accuracy"] += r.token_accuracy / n;
    m["exact_match"] += r.exact_match / n;
    m["cross_entropy"] += r.cross_entropy / n;
    if (!std::isnan(r.excess_ce)) m["excess_ce"] += r.excess_ce / n;
  }
  return m;
}

}  // namespace

TemperatureChoice search_temperatures(AlignBy by, const std::vector<double>& grid,
                                      const EvalJob& base, int l_train, const EvaluateJob& run) {
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
  const auto statistic = [&](const std::vector<LengthResult>& cells, AlignBy s) {
    double sum = 0;  // passkey: the mean over its depth cells
    for (const LengthResult& r : cells) sum += mean_statistic(r.attention, s);
    return sum / static_cast<double>(cells.size());
  };
  const auto tokens = [&](int length) {
    return static_cast<double>(tokens_per_sequence(
        base.task, base.token_settings ? *base.token_settings : TokenTaskSettings{}, length));
  };
  const std::vector<LengthResult> at_train = cells_at(l_train, 1.0);
  const double target_pmax = statistic(at_train, AlignBy::kMaxProb);
  const double target_entropy = statistic(at_train, AlignBy::kEntropy);
  const auto [sigma_train, p_train] = layer0_spread(at_train);
  TemperatureChoice out;
  out.grid = grid;
  for (const int length : base.lengths) {
    if (length <= l_train) continue;
    const std::vector<LengthResult> plain = cells_at(length, 1.0);
    const double sigma = layer0_spread(plain).first;
    out.pmax_closed_form[length] =
        temperature_pmax_closed_form(p_train, tokens(l_train), tokens(length), sigma_train, sigma);
    out.entropy_closed_form[length] =
        temperature_entropy_closed_form(tokens(l_train), tokens(length), sigma_train, sigma);
    out.log_rule[length] = temperature_log_rule(tokens(l_train), tokens(length));
    std::map<double, const TemperatureCurvePoint*> at_tau;
    const size_t first = out.curve.size();
    for (const double tau : grid) {
      const std::vector<LengthResult> cells = tau == 1.0 ? plain : cells_at(length, tau);
      out.curve.push_back({length, tau, statistic(cells, AlignBy::kMaxProb),
                           statistic(cells, AlignBy::kEntropy), curve_metrics(cells)});
    }
    for (size_t i = first; i < out.curve.size(); ++i) at_tau[out.curve[i].tau] = &out.curve[i];
    out.pmax_search[length] = closest_temperature(
        grid, [&](double tau) { return at_tau.at(tau)->max_prob; }, target_pmax);
    out.entropy_search[length] = closest_temperature(
        grid, [&](double tau) { return at_tau.at(tau)->entropy; }, target_entropy);
    const double chosen =
        by == AlignBy::kMaxProb ? out.pmax_search[length] : out.entropy_search[length];
    out.searched[length] = chosen;
    if (const std::string bound = grid_bound(grid, chosen); !bound.empty())
      out.at_bound[length] = bound;
  }
  return out;
}

namespace {

nlohmann::ordered_json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json by_length(const std::map<int, double>& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [length, tau] : m) j[std::to_string(length)] = number_or_null(tau);
  return j;
}

}  // namespace

nlohmann::ordered_json closed_form_json(const TemperatureChoice& t) {
  return {{"proposition_1_pmax", by_length(t.pmax_closed_form)},
          {"proposition_2_entropy", by_length(t.entropy_closed_form)}};
}

nlohmann::ordered_json temperature_search_json(const TemperatureChoice& t) {
  nlohmann::ordered_json bounds = nlohmann::ordered_json::object();
  for (const auto& [length, bound] : t.at_bound) bounds[std::to_string(length)] = bound;
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const TemperatureCurvePoint& p : t.curve) {
    nlohmann::ordered_json point = {{"length", p.length},
                                    {"tau", p.tau},
                                    {"attention_max_prob", number_or_null(p.max_prob)},
                                    {"attention_entropy", number_or_null(p.entropy)}};
    for (const auto& [name, value] : p.metrics) point[name] = number_or_null(value);
    curve.push_back(point);
  }
  return {{"grid", t.grid},
          {"at_bound", bounds},
          {"chosen",
           {{"auto-pmax", by_length(t.pmax_search)},
            {"auto-entropy", by_length(t.entropy_search)},
            {"log_rule", by_length(t.log_rule)}}},
          {"curve", curve}};
}

TemperatureChoice prepare_test_time_eval(EvalJob& job, const TrainSpec& spec,
                                         const ModelConfig& config,
                                         const std::vector<double>& params,
                                         const EvaluateJob& run) {
  job.attention = test_time_attention(spec.test_attention, spec, config.pe);
  if (spec.test_attention.attention_stats == 1) job.attention_stats = true;
  job.attention_logits = job.attention_stats;
  job.greedy = spec.test_attention.decode == "greedy";
  if (job.lengths.empty()) return {};
  const TaskKind task = parse_task(spec.task);
  // The learned bias's untrained distances, up to the largest distance a test sequence reaches.
  const int64_t longest = tokens_per_sequence(task, spec.token, job.lengths.back());
  const int max_distance = static_cast<int>(std::max<int64_t>(longest, job.random_positions)) - 1;
  job.untrained_distances = untrained_distances(config, params, max_distance);
  if (spec.test_attention.distance_cap == "trained")
    job.attention.window.max_distance = trained_distance_cap(job.untrained_distances);
  const std::optional<AlignBy> by = temperature_alignment(spec.test_attention);
  if (!by) return {};
  TemperatureChoice temperatures =
      search_temperatures(*by, search_grid(spec.test_attention), job, spec.l_train, run);
  std::vector<double> scale(tokens_per_sequence(task, spec.token, job.lengths.back()) + 1, 1.0);
  for (const auto& [length, tau] : temperatures.searched)
    scale[tokens_per_sequence(task, spec.token, length)] = 1.0 / tau;
  job.attention.logit_scale_by_length = scale;
  return temperatures;
}

void add_temperature_json(nlohmann::ordered_json& into, const TemperatureChoice& t) {
  if (t.searched.empty()) return;
  nlohmann::ordered_json by_length;
  for (const auto& [length, tau] : t.searched) by_length[std::to_string(length)] = tau;
  into["temperature_by_length"] = by_length;
  into["temperature_closed_form"] = closed_form_json(t);
  into["temperature_search"] = temperature_search_json(t);
}

}  // namespace lenlab
