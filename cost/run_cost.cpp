#include "cost/run_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/parameters.hpp"
#include "models/position_bias.hpp"
#include "train/inference_attention.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace {

constexpr double kFloat = 4;  // bytes: the engine computes in float

// Rows the CPU evaluator puts in one forward (train/evaluate.hpp's default max_rows); a GPU
// group's 2^18 rows are spread over its K models, so per model it is less.
constexpr double kEvalRows = 8192;
// The CPU inference attention's query tile (models/cpu/attention_infer.hpp).
constexpr double kAttentionTile = 64;

// Parameters of one model: every tensor of models/parameters.hpp's layout (the encoding's tables
// too: t5's [tables, buckets, heads], FIRE's MLP, kerple's, a learned position table), each
// tensor's elements multiplied in double so that a huge setting is a huge estimate, not a
// wrapped one.
double parameters(const ModelConfig& c) {
  double p = 0;
  for (const TensorInfo& t : parameter_layout(c)) {
    double n = 1;
    for (const int s : t.shape) n *= s;
    p += n;
  }
  return p;
}

// Attention's part of forward_flops: q·k and p·v over the causal half of each full block, and over
// `last_rows` query rows of the last.
double attention_flops(const ModelConfig& c, double L, double layers, double last_rows) {
  const double d = c.d_model;
  return layers * 2 * d * L * (L + 1) + (last_rows > 0 ? last_rows * 4 * d * L : 0);
}

// Forward FLOPs of one sequence of L tokens through `layers` full blocks, plus `last_rows` rows of
// one more block (whose keys and values still come from every row).
double forward_flops(const ModelConfig& c, double L, double layers, double last_rows) {
  const double d = c.d_model, f = c.d_ff;
  const double per_token = 2 * (4 * d * d + 2 * d * f);  // qkv, output projection, MLP
  double flops = layers * L * per_token + attention_flops(c, L, layers, last_rows);
  if (last_rows > 0) flops += L * 2 * 3 * d * d + last_rows * 2 * (d * d + 2 * d * f);
  return flops;
}

}  // namespace

double RunCost::eval_flops_at(int length) const {
  const double L = static_cast<double>(tokens_per_sequence(task, token, length));
  if (is_token_task(task))
    return n_depths * static_cast<double>(eval_samples) *
           forward_flops(model, L, model.n_layer - 1, token_answer_rows(task, token, length));
  const double n = length < 60 ? std::min<double>(eval_samples, std::ldexp(1.0, length))
                               : eval_samples;  // all 2^l sequences when that is fewer
  return n * forward_flops(model, L, model.n_layer - 1, 1);
}

namespace {

// The resolved task settings the estimate needs, without resolving the spec again (a task name
// resolve() would refuse is costed as a scalar task: the run is refused before it matters).
TaskKind task_of(const TrainSpec& spec) {
  for (const std::string& name : task_names())
    if (name == spec.task) return parse_task(name);
  return TaskKind::kLength;
}

}  // namespace

RunCost estimate_run_cost(const TrainSpec& spec, const ModelConfig& c) {
  RunCost cost;
  cost.model = c;
  cost.eval_samples = spec.eval_samples;
  cost.task = task_of(spec);
  cost.token = spec.token;
  const bool token = is_token_task(cost.task);
  if (task_has_depths(cost.task))
    cost.n_depths = static_cast<int>(
        parse_depths(spec.depths.empty() ? kDefaultDepths : spec.depths, "--depths").size());
  // Tokens of a sequence of length l: l + 2 for the scalar tasks.
  const auto tokens = [&](int l) {
    return static_cast<double>(tokens_per_sequence(cost.task, cost.token, std::max(l, 1)));
  };
  const double d = c.d_model, f = c.d_ff, layers = c.n_layer, H = c.n_head;
  const double rope = positional_encoding_info(c.pe).rotary() ? 1 : 0;

  // ---- work
  // Training lengths are uniform in [lo, hi] (training_lengths: 1..l_train unless --l-train-min);
  // the last block runs past q·k·v at the rows the heads read (models/model_train.hpp), as in
  // evaluation.
  // The misalignment regularizer's batch (and its control's) instead holds two views of l_train
  // symbols per sequence (train/misalign_regularizer.hpp), every row read.
  double mean_flops = 0, mean_attention = 0;
  if (spec.misalign.views()) {
    const double L = tokens(spec.l_train);
    mean_flops = 2 * forward_flops(c, L, layers - 1, L);
    mean_attention = 2 * attention_flops(c, L, layers - 1, L);
  } else {
    const int lo = std::clamp(spec.l_train_min, 1, std::max(spec.l_train, 1));
    for (int l = lo; l <= spec.l_train; ++l) {
      // the rows the last block runs at: a token task's answer rows, a scalar task's EOS row
      const double rows = token ? token_answer_rows(cost.task, cost.token, l) : 1;
      mean_flops += forward_flops(c, tokens(l), layers - 1, rows);
      mean_attention += attention_flops(c, tokens(l), layers - 1, rows);
    }
    mean_flops /= spec.l_train - lo + 1;
    mean_attention /= spec.l_train - lo + 1;
  }
  cost.train_step_flops = 3 * spec.batch_size * mean_flops;
  cost.train_flops = cost.train_step_flops * spec.steps;
  cost.train_attention_flops = 3 * spec.batch_size * mean_attention * spec.steps;
  if (spec.until_fit.on) {
    // The stop rule's checks (train/until_fit.hpp), as many as --steps allows: each an inference
    // forward of --fit-samples sequences at every training length. A run that stops early costs
    // less; the estimate is its cap.
    const LengthRange range = training_lengths(spec);
    double check = 0;
    for (int l = range.lo; l <= range.hi; ++l)
      check += cost.eval_flops_at(l) / spec.eval_samples * spec.until_fit.samples;
    cost.fit_check_flops = check * (spec.steps / spec.until_fit.every);
    cost.train_flops += cost.fit_check_flops;
  }
  const std::vector<int> lengths = test_lengths(spec);
  for (const int l : lengths) cost.eval_flops += cost.eval_flops_at(l);
  if (temperature_alignment(spec.test_attention)) {
    // The statistic at l_train, then at each grid temperature at each length past it, on the
    // first kTemperatureSearchSamples test sequences.
    const double share =
        std::min(1.0, static_cast<double>(kTemperatureSearchSamples) / spec.eval_samples);
    const double grid = static_cast<double>(search_grid(spec.test_attention).size());
    cost.temperature_search_flops = share * cost.eval_flops_at(spec.l_train);
    for (const int l : lengths)
      if (l > spec.l_train) cost.temperature_search_flops += grid * share * cost.eval_flops_at(l);
    cost.eval_flops += cost.temperature_search_flops;
  }
  if (token && spec.test_attention.decode == "greedy") {
    // Greedy decoding (train/greedy_decode.hpp) runs every row of each test sequence through
    // every block once more, from the key-value cache: a full forward's work read at every row.
    for (const int l : lengths)
      cost.greedy_flops += cost.n_depths * static_cast<double>(spec.eval_samples) *
                           forward_flops(c, tokens(l), c.n_layer - 1, tokens(l));
    cost.eval_flops += cost.greedy_flops;
  }
  const std::string length_flags = spec.lengths.empty() ? fmt::format("--l-test {}", spec.l_test)
                                                        : fmt::format("--lengths {}", spec.lengths);

  const std::string model_flags =
      fmt::format("--d-model {}, --d-ff {}, --n-layer {}", c.d_model, c.d_ff, c.n_layer);
  cost.work_parts = {
      {"training", cost.train_flops,
       fmt::format("--steps {}, --batch {}, --l-train {}, {}{}", spec.steps, spec.batch_size,
                   spec.l_train, model_flags,
                   spec.until_fit.on ? fmt::format(", --until-fit every {} steps (at most: it "
                                                   "may stop earlier)",
                                                   spec.until_fit.every)
                                     : ""),
       /*training=*/true},
      {"evaluation", cost.eval_flops,
       fmt::format("{}, --eval-samples {}, {}{}{}", length_flags, spec.eval_samples, model_flags,
                   cost.temperature_search_flops > 0
                       ? fmt::format(", --temperature {}", spec.test_attention.temperature)
                       : "",
                   cost.greedy_flops > 0 ? ", --decode greedy" : "")}};

  // ---- memory
  auto& parts = cost.memory_parts;
  const double P = parameters(c);
  // Parameters, and the checkpoint's bytes when written; for training also their gradients,
  // AdamW's m and v and the decay mask.
  // The encoding's own tables among them (t5's buckets): its settings are what to change.
  const char* pe_settings = positional_encoding_info(c.pe).settings;
  const std::string parameter_flags =
      *pe_settings == '\0' ? model_flags
                           : fmt::format("{}, --pe {} ({})", model_flags,
                                         positional_encoding_name(c.pe), pe_settings);
  parts.push_back({"parameters", 2 * P * kFloat, parameter_flags});
  parts.push_back({"gradients and optimizer state", 5 * P * kFloat, parameter_flags, true});
  // Training activations (models/model.hpp's Activations and ActivationGrads), kept for the
  // largest batch (every sequence at l_train) until the run ends; the probabilities and their
  // gradients; the packed batch's ints.
  const double L_train = tokens(spec.l_train),
               N = (spec.misalign.views() ? 2 : 1) * spec.batch_size * L_train;
  const double per_token = d + layers * (8 * d + 4 + 3 * f + 3 * d * rope) +  // forward
                           (6 * d + 3 * d * rope + 2 * f);                    // gradients
  parts.push_back(
      {"training activations",
       N * per_token * kFloat + 2 * layers * N * L_train * H * kFloat + N * 6 * 4,
       fmt::format("--batch {}, --l-train {}, {}", spec.batch_size, spec.l_train, model_flags),
       true});
  // Evaluation at the longest length: its set (tokens and positions per row, targets and weights
  // per sequence), one forward's inference scratch, attention's query tile per thread.
  const int longest = lengths.empty() ? 0 : lengths.back();
  const double L_test = tokens(longest);
  const double n_test = token || longest >= 60
                            ? spec.eval_samples
                            : std::min<double>(spec.eval_samples, std::ldexp(1.0, longest));
  const double rows = std::max(kEvalRows, L_test);
  // A bias encoding's tables [n_head, rows, distances] (models/position_bias.hpp) at the longest
  // test sequence: every table in the backend's memory and in a host copy in T, one at a time
  // computed in double and in T on the way; FIRE has a row per query position, so its tables grow
  // with the length squared. A learned bias also keeps their gradients (device and host) in
  // training, at l_train. (FIRE, l_test 1000: 112 MB here; the process measured 75 MB above
  // ALiBi's.)
  const PositionalEncodingInfo& encoding = positional_encoding_info(c.pe);
  if (encoding.distance_bias()) {
    const double n_tables = PositionBias::tables_of(c);
    const auto one_table = [&](double L) {  // elements
      return H * (encoding.math->by_query_position ? L : 1.0) * L;
    };
    parts.push_back({"position bias tables",
                     one_table(L_test) * (n_tables * 2 * kFloat + 8 + kFloat),
                     fmt::format("--pe {}, {}, --n-head {}", positional_encoding_name(c.pe),
                                 length_flags, c.n_head)});
    if (encoding.learned_bias())
      parts.push_back(
          {"position bias gradients", one_table(L_train) * n_tables * 2 * kFloat,
           fmt::format("--pe {}, --l-train {}", positional_encoding_name(c.pe), spec.l_train),
           true});
  }
  parts.push_back({"evaluation",
                   n_test * (L_test * 2 * 4 + 64) +
                       rows * (10 * d + 3 * d * rope + 2 * f + 4) * kFloat +
                       (kAttentionTile + 1) * L_test * kFloat * std::max(1, spec.threads),
                   fmt::format("{}, --eval-samples {}", length_flags, spec.eval_samples)});
  // The loss log and loss.csv's text; the results and results.csv's.
  parts.push_back(
      {"loss log", spec.steps * (2 * 32.0 + 48), fmt::format("--steps {}", spec.steps), true});
  parts.push_back({"results", lengths.size() * (64.0 + 128), length_flags});
  double bytes = 0;
  for (const CostPart& p : parts) bytes += p.amount;
  cost.peak_bytes = bytes;
  return cost;
}

}  // namespace lenlab
