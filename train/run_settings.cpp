#include "train/run_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "core/text_rule.hpp"
#include "models/position_bias.hpp"
#include "tasks/scalar_tasks.hpp"
#include "tasks/token_tasks.hpp"
#include "train/inference_attention.hpp"
#include "train/lengths.hpp"
#include "train/random_positions.hpp"

namespace lenlab {

namespace {
constexpr int kMeanCheckedLength = 1000;
}  // namespace

int thread_limit() {
  return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

// `flag` within [lo, hi], else a UsageError naming both ends; `why` says where hi comes from.

void check_range(const char* flag, int64_t value, int64_t lo, int64_t hi, const char* why = "") {
  if (value < lo || value > hi)
    throw UsageError(
        fmt::format("{} must be an integer from {} to {}{}, got {}", flag, lo, hi, why, value));
}

// An encoding's settings (the rows with Setting::encoding) given to another encoding are refused:
// they would change nothing.
void check_encoding_settings(const TrainSpec& s) {
  const TrainSpec base;
  std::vector<std::string> defaults;
  visit_spec_fields(base, [&](const Setting&, const auto& value) {
    defaults.push_back(fmt::format("{}", value));
  });
  size_t i = 0;
  visit_spec_fields(s, [&](const Setting& row, const auto& value) {
    const std::string given = fmt::format("{}", value);
    if (row.encoding && s.pe != row.encoding && given != defaults[i])
      throw UsageError(fmt::format(
          "{} {} applies to --pe {} only; this run's encoding is {}: give --pe {} or leave {} out",
          row.flag_name(), given, row.encoding, s.pe, row.encoding, row.flag_name()));
    ++i;
  });
  if (s.t5_per_layer != 0 && s.t5_per_layer != 1)
    throw UsageError(fmt::format(
        "--t5-per-layer must be 0 (one table shared by the layers, as T5) or 1 (one per layer), "
        "got {}",
        s.t5_per_layer));
  check_range("--fire-width", s.fire_width, 1, 4096);
}

// The task and the encoding by name, an unknown one refused naming its flag.
TaskKind task_of(const TrainSpec& s) {
  return for_flag("--task", [&] { return parse_task(s.task); });
}
PositionalEncoding encoding_of(const TrainSpec& s) {
  return for_flag("--pe", [&] { return parse_positional_encoding(s.pe); });
}

}  // namespace

RopeScaling training_rope_scaling(const TrainSpec& s) {
  RopeScaling r;
  const TrainSpec base;
  if (s.train_rope_scaling.empty()) {
    if (s.train_rope_factor != base.train_rope_factor)
      throw UsageError(
          fmt::format("--train-rope-factor {} sets --train-rope-scaling, which is not given: give "
                      "--train-rope-scaling pi, ntk or yarn, or leave the factor at {}",
                      s.train_rope_factor, base.train_rope_factor));
    return r;
  }
  r.kind =
      for_flag("--train-rope-scaling", [&] { return parse_rope_scaling(s.train_rope_scaling); });
  if (r.kind == RopeScalingKind::kNone) {
    if (s.train_rope_factor != base.train_rope_factor)
      throw UsageError(fmt::format(
          "--train-rope-factor {} has no effect with --train-rope-scaling none (plain angles): "
          "give pi, ntk or yarn, or leave the factor at {}",
          s.train_rope_factor, base.train_rope_factor));
    return r;
  }
  if (r.kind == RopeScalingKind::kDynamicNtk)
    throw UsageError(
        "--train-rope-scaling dynamic-ntk would change nothing in training: it rescales only "
        "sequences longer than the training window; use it at test time (--rope-scaling "
        "dynamic-ntk), or train with pi, ntk or yarn");
  if (!(std::isfinite(s.train_rope_factor) && s.train_rope_factor > 0))
    throw UsageError(
        fmt::format("--train-rope-factor must be a finite number > 0 (the extension's s), got {}",
                    s.train_rope_factor));
  r.factor = s.train_rope_factor;
  // The context the extension stretches s times to the training window (YaRN's L_orig), as when
  // a model pretrained on window/s tokens is fine-tuned on the window.
  const double window =
      static_cast<double>(tokens_per_sequence(parse_task(s.task), s.token, s.l_train));
  r.original_length = std::max(1, static_cast<int>(std::lround(window / r.factor)));
  rope_angles(r, 2, 10000.0, static_cast<int>(window));  // the kind's own checks
  return r;
}

LengthRange training_lengths(const TrainSpec& s) {
  const int shortest = shortest_length(parse_task(s.task), s.token);
  return {s.l_train_min > 0 ? s.l_train_min : shortest, std::max(shortest, s.l_train)};
}

double fire_threshold_of(const TrainSpec& s) {
  const int64_t window = tokens_per_sequence(parse_task(s.task), s.token, s.l_train);
  if (s.fire_threshold == "train") return static_cast<double>(window);
  char* end = nullptr;
  const double L = std::strtod(s.fire_threshold.c_str(), &end);
  if (s.fire_threshold.empty() || end != s.fire_threshold.c_str() + s.fire_threshold.size() ||
      !std::isfinite(L) || L < 1)
    throw UsageError(fmt::format(
        "--fire-threshold must be 'train' (the training window: {} tokens for this run) or a "
        "number of tokens >= 1 (FIRE's L at the start; it is learned from there), got '{}'",
        window, s.fire_threshold));
  return L;
}

// "sqrt_d" → √d_model; else a finite number > 0 (UsageError naming the value and the choices).
double embedding_scale_of(const TrainSpec& s) {
  if (s.embedding_scale == "sqrt_d") return std::sqrt(static_cast<double>(s.d_model));
  char* end = nullptr;
  const double v = std::strtod(s.embedding_scale.c_str(), &end);
  if (s.embedding_scale.empty() || end != s.embedding_scale.c_str() + s.embedding_scale.size() ||
      !std::isfinite(v) || v <= 0)
    throw UsageError(fmt::format(
        "--embedding-scale must be sqrt_d (sqrt(d_model) = {:.6g} for this run) or a number > 0, "
        "got '{}'",
        std::sqrt(static_cast<double>(s.d_model)), s.embedding_scale));
  return v;
}

ModelConfig model_config(const TrainSpec& s) {
  const TaskKind task = task_of(s);
  const TokenTaskSettings& token = s.token;
  ModelConfig model;
  model.pe = encoding_of(s);
  model.n_layer = s.n_layer;
  model.d_model = s.d_model;
  model.n_head = s.n_head;
  model.d_ff = s.d_ff;
  model.embedding_scale = embedding_scale_of(s);
  model.pe_bias = s.pe_bias;
  model.t5_buckets = s.t5_buckets;
  model.t5_max_distance = s.t5_max_distance;
  model.t5_per_layer = s.t5_per_layer == 1;
  // FIRE's threshold L at the start, the training window unless given: below it, a query's
  // distances are scaled by L's ψ; past it, by its own position's (progressive interpolation).
  model.fire_threshold = fire_threshold_of(s);
  model.fire_width = s.fire_width;
  model.rope_base = s.rope_base;
  model.rope_scaling = training_rope_scaling(s);
  // The longest sequence: BOS + l_test bits + EOS, or a token task's at l_test.
  model.max_positions = static_cast<int>(tokens_per_sequence(task, token, s.l_test));
  if (s.random_positions > 0) model.max_positions = s.random_positions;  // ids 0..N−1
  if (is_token_task(task)) {
    model.vocab_size = token_vocab_size(task, token);
    model.scalar_head = false;
    model.token_head = true;
  } else {
    model.vocab_size = task_vocab_size(task);
  }
  return model;
}

ResolvedSpec resolve(const TrainSpec& s) {
  // Every text setting under the one text rule before any is used: a NUL would end an expression
  // early for muparser, a line break would split a CSV row of the run's settings.
  visit_spec_fields(s, [](const Setting& row, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      check_text(row.flag_name(), value);
  });
  const TaskKind task = task_of(s);
  ModelConfig model;
  model.pe = encoding_of(s);
  // Hard limits far past anything that fits a machine: they keep every size an int can hold. What
  // a machine can run is checked against its memory and a time budget (cost/budget.hpp).
  check_range("--l-train", s.l_train, 1, kMaxLength);
  if (s.l_test < s.l_train) {
    // With --lengths alone, l_test is their longest (spec_from_json, the CLI): name them.
    if (!s.lengths.empty() && s.l_test == test_lengths(s).back())
      throw UsageError(fmt::format(
          "--lengths '{}' ends at {}, below --l-train {}: test at least up to the training "
          "length (add a length >= {})",
          s.lengths, s.l_test, s.l_train, s.l_train));
    throw UsageError(
        fmt::format("--l-test ({}) must be at least --l-train ({})", s.l_test, s.l_train));
  }
  check_range("--l-test", s.l_test, s.l_train, kMaxLength);
  std::vector<int> lengths = test_lengths(s);
  if (lengths.back() > s.l_test)
    throw UsageError(fmt::format("--lengths '{}' goes past --l-test {}: raise --l-test to {}",
                                 s.lengths, s.l_test, lengths.back()));
  check_range("--batch", s.batch_size, 1, kMaxLength);
  check_range("--eval-samples", s.eval_samples, 1, kMaxLength);
  const TokenTaskSettings& token = s.token;
  if (s.l_train_min != 0) {
    const int shortest = shortest_length(task, token);
    if (s.l_train_min < shortest || s.l_train_min > s.l_train)
      throw UsageError(fmt::format(
          "--l-train-min must be from {} ({}) to --l-train {} (training lengths are uniform "
          "between them; equal to --l-train: one length), or 0 for {}; got {}",
          shortest, shortest_length_why(task), s.l_train, shortest, s.l_train_min));
    if (s.misalign.views())
      throw UsageError(fmt::format(
          "--l-train-min {}: the misalignment regularizer's views are --l-train {} symbols each, "
          "not lengths drawn from a range; leave --l-train-min out",
          s.l_train_min, s.l_train));
  }
  std::vector<double> depths = {kNoDepth};
  if (is_token_task(task)) {
    if (s.reparam != "identity" || !s.reparam_inverse.empty() || s.reparam_shift != 0.0)
      throw UsageError(fmt::format(
          "--reparam, --reparam-inverse and --reparam-shift apply to the scalar tasks ({}); the "
          "token task '{}' is trained on cross-entropy over its answer tokens: leave them at "
          "identity, '' and 0",
          join_choices(scalar_task_names()), s.task));
    // A task is not defined below its shortest length (docs/tasks.md): an --l-train below it
    // would train at the shortest alone while the manifest and the "beyond l_train" range said
    // otherwise, so it is refused as the test lengths are.
    if (const int shortest = shortest_length(task, token); s.l_train < shortest)
      throw UsageError(fmt::format(
          "--l-train {} is below {}, {}; lengths below it are not defined for the task: give "
          "--l-train >= {}",
          s.l_train, shortest, shortest_length_why(task), shortest));
    // The training lengths (the shortest or --l-train-min .. l_train), then the test lengths.
    const LengthRange train = training_lengths(s);
    check_token_task(task, token, std::max(train.lo, 1), train.hi);
    try {
      check_token_task(task, token, lengths.front(), lengths.back());
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("test lengths ({}): {}",
                                   s.lengths.empty() ? fmt::format("--l-test {}", s.l_test)
                                                     : fmt::format("--lengths {}", s.lengths),
                                   e.what()));
    }
    if (task_has_depths(task))
      depths = parse_depths(s.depths.empty() ? kDefaultDepths : s.depths, "--depths");
  }
  if (!s.depths.empty()) parse_depths(s.depths, "--depths");  // checked even when unused
  check_vcl(s.vcl, task, token, s.l_train);
  check_random_positions(s.random_positions, s.pe, task, token, s.l_train, s.l_test);
  check_misalign_regularizer(s.misalign, task, s.l_train);
  check_until_fit(s.until_fit, s.validate, task);
  check_temperature(s.test_attention.temperature);
  test_time_attention(s.test_attention, s, model.pe);  // the other test-time settings
  // A batch's rows are counted in int (packed offsets). The regularizer's batches hold two views
  // of l_train symbols per sequence of --batch.
  const int64_t views = s.misalign.views() ? 2 : 1;
  for (const auto& [flag, n, l, per] :
       {std::tuple{"--batch", s.batch_size, s.l_train, views},
        std::tuple{"--eval-samples", s.eval_samples, s.l_test, int64_t{1}}}) {
    const int64_t tokens = per * tokens_per_sequence(task, token, l);
    if (static_cast<int64_t>(n) * tokens > INT32_MAX)
      throw UsageError(fmt::format(
          "{} {} sequences of up to {} tokens make more than 2^31 rows in one batch; lower {}",
          flag, n, tokens, flag));
  }
  check_range("--n-layer", s.n_layer, 1, 1024);
  check_range("--d-model", s.d_model, 1, 65536);
  check_range("--d-ff", s.d_ff, 1, 65536);
  check_range("--n-head", s.n_head, 1, s.d_model, " (--d-model)");
  check_range("--threads", s.threads, 1, thread_limit(), " (4 per core of this machine)");
  s.optimizer.validate(s.steps);
  if (s.precision != "float32" && s.precision != "float64")
    throw UsageError(fmt::format("unknown --precision '{}'; valid choices: {}", s.precision,
                                 join_choices({"float32", "float64"})));
  check_encoding_settings(s);
  model = model_config(s);
  model.validate();
  for_flag("--pe-bias",
           [&] { check_fixed_bias(model, model.max_positions - 1); });  // every distance
  if (s.precision == "float32") check_float32_bias(model, model.max_positions - 1);
  Reparam reparam = reparam_of(s.reparam, s.reparam_inverse, s.reparam_shift);
  if (is_token_task(task)) {
    std::shared_ptr<const MarkovChain> chain;
    if (task_needs_chain(task))
      chain = std::make_shared<const MarkovChain>(token.n_symbols, token.markov_order,
                                                  token.markov_concentration, token.markov_seed);
    return {task,
            model,
            std::move(reparam),
            std::move(lengths),
            std::move(chain),
            std::move(depths),
            s.precision == "float64",
            training_lengths(s)};
  }
  // f is applied to training targets and inverted on test outputs: check it on all of them. The
  // mean tasks' targets k/l number about l_test²/2 (l_test 30000: 450 million); past
  // kMeanCheckedLength their fractions lie in [0, 1], which the targets of the shorter lengths
  // (1/l² ≤ 1e-6 apart) and check_domain's grid already cover.
  const bool fractions = task_info(task).scalar->fractions;
  reparam.check_domain(
      task_target_values(task, 1, fractions ? std::min(s.l_test, kMeanCheckedLength) : s.l_test),
      s.task);
  return {task,
          model,
          std::move(reparam),
          std::move(lengths),
          nullptr,
          std::move(depths),
          s.precision == "float64",
          training_lengths(s)};
}

Reparam reparam_of(const std::string& f, const std::string& inverse, double shift) {
  if (!std::isfinite(shift))
    throw UsageError(fmt::format("--reparam-shift must be finite, got {}", shift));
  // The map, then its inverse: each error names the flag that gave the expression.
  Reparam reparam = for_flag("--reparam", [&] { return Reparam::make(f, "", shift); });
  if (!inverse.empty())
    reparam = for_flag("--reparam-inverse", [&] { return Reparam::make(f, inverse, shift); });
  return reparam;
}

int64_t tokens_per_sequence(TaskKind task, const TokenTaskSettings& token, int length) {
  return is_token_task(task) ? token_sequence_tokens(task, token, length) : int64_t{length} + 2;
}

std::vector<int> test_lengths(const TrainSpec& spec) {
  if (spec.lengths.empty()) {
    // No task's lengths start below its shortest (check_token_task says so if that is empty).
    const int first = shortest_length(parse_task(spec.task), spec.token);
    std::vector<int> all;
    for (int l = first; l <= spec.l_test; ++l) all.push_back(l);
    if (all.empty()) all.push_back(std::max(spec.l_test, 1));
    return all;
  }
  return parse_lengths(spec.lengths, "--lengths", kMaxLength);
}

}  // namespace lenlab
