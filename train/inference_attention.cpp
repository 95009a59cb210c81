#include "train/inference_attention.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "core/text_rule.hpp"
#include "models/encodings/encoding_math.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

namespace {

// "train" → the training value; else an integer >= 1 (UsageError naming flag and value).
int train_or_count(const std::string& text, int train_value, const char* flag, const char* what,
                   const char* also = "") {
  if (text == "train") return train_value;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1)
    throw UsageError(
        fmt::format("{} must be 'train' ({}: {} for this run){} or an integer >= 1, got '{}'", flag,
                    what, train_value, also, text));
  return value;
}

// A temperature given as a number (UsageError unless within [kMinTemperature, kMaxTemperature]).
double fixed_temperature(const std::string& text) {
  char* end = nullptr;
  const double tau = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(tau >= kMinTemperature) ||
      !(tau <= kMaxTemperature))
    throw UsageError(fmt::format(
        "--temperature must be a number from {} to {} (attention logits are divided by it; 1 is "
        "the trained model; past these ends the attention is already its argmax or uniform, "
        "and 1/T overflows the logits long before 0), auto-pmax or auto-entropy (paper 002's "
        "search per test length), got {}",
        kMinTemperature, kMaxTemperature, shown(text)));
  return tau;
}

// --rope-scaling and its factor (UsageError naming the bad value): off when rope_scaling is empty.
RopeScaling rope_scaling_of(const TestTimeAttention& t, int window, PositionalEncoding pe) {
  RopeScaling r;
  const TestTimeAttention defaults;
  if (t.rope_scaling.empty()) {
    if (t.rope_factor != defaults.rope_factor || t.yarn_alpha != defaults.yarn_alpha ||
        t.yarn_beta != defaults.yarn_beta)
      throw UsageError(fmt::format(
          "--rope-factor, --yarn-alpha and --yarn-beta set --rope-scaling, which is not given: "
          "give --rope-scaling {} or leave them at auto, {} and {}",
          join_choices(rope_extension_names()), defaults.yarn_alpha, defaults.yarn_beta));
    return r;
  }
  r.kind = for_flag("--rope-scaling", [&] { return parse_rope_scaling(t.rope_scaling); });
  if (r.kind == RopeScalingKind::kNone) return r;
  if (!positional_encoding_info(pe).rotary())
    throw UsageError(fmt::format(
        "--rope-scaling {}: the run's positional encoding is {}, which rotates nothing; RoPE's "
        "context extensions apply to --pe rope",
        t.rope_scaling, positional_encoding_name(pe)));
  r.original_length = window;
  r.yarn_alpha = t.yarn_alpha;
  r.yarn_beta = t.yarn_beta;
  if (t.rope_factor == "auto") {
    r.factor = 1.0;  // resolved per test length (AttentionSpec::rope_at); dynamic-ntk's own is 1
  } else {
    char* end = nullptr;
    r.factor = std::strtod(t.rope_factor.c_str(), &end);
    if (t.rope_factor.empty() || end != t.rope_factor.c_str() + t.rope_factor.size() ||
        !std::isfinite(r.factor) || r.factor <= 0)
      throw UsageError(fmt::format(
          "--rope-factor must be a finite number > 0 (the context extension's s) or auto (per "
          "test length: its tokens / the training window's {}), got '{}'",
          window, t.rope_factor));
  }
  // The kind's own checks: YaRN's ramp, of --yarn-alpha and --yarn-beta.
  for_flag("--yarn-alpha, --yarn-beta", [&] { rope_angles(r, 2, 10000.0, window); });
  return r;
}

}  // namespace

void check_temperature(const std::string& text) {
  TestTimeAttention t;
  t.temperature = text;
  if (!temperature_alignment(t)) fixed_temperature(text);
}

std::vector<double> search_grid(const TestTimeAttention& t) {
  const double lowest = t.temperature_min, step = t.temperature_step;
  if (!(lowest >= kMinTemperature && lowest <= 1))
    throw UsageError(fmt::format(
        "--temperature-min must be from {} to 1 (the lowest temperature the search tries; the "
        "grid runs from 1 down to it), got {}",
        kMinTemperature, lowest));
  if (!(step > 0) || !std::isfinite(step))
    throw UsageError(fmt::format(
        "--temperature-step must be a finite number > 0 (the grid's spacing), got {}", step));
  if ((1.0 - lowest) / step >= kMaxTemperatureGrid)
    throw UsageError(
        fmt::format("--temperature-min {} with --temperature-step {} makes a grid of more than {} "
                    "temperatures (each one evaluation per test length); take a larger step",
                    lowest, step, kMaxTemperatureGrid));
  const bool default_grid = lowest == kDefaultTemperatureMin && step == kDefaultTemperatureStep;
  if (!temperature_alignment(t) && !default_grid)
    throw UsageError(fmt::format(
        "--temperature-min and --temperature-step set the search's grid, which only an auto "
        "temperature has; --temperature is '{}': give auto-pmax or auto-entropy, or leave them "
        "at {} and {}",
        t.temperature, kDefaultTemperatureMin, kDefaultTemperatureStep));
  return temperature_grid(lowest, step);
}

std::optional<AlignBy> temperature_alignment(const TestTimeAttention& t) {
  for (AlignBy by : {AlignBy::kMaxProb, AlignBy::kEntropy})
    if (t.temperature == align_name(by)) return by;
  return std::nullopt;
}

void check_decode(const std::string& decode) {
  if (decode != "teacher-forced" && decode != "greedy")
    throw UsageError(fmt::format(
        "--decode must be teacher-forced (score each answer token given the true earlier ones) or "
        "greedy (also score the answer the model writes), got '{}'",
        decode));
}

AttentionSpec test_time_attention(const TestTimeAttention& t, const TrainSpec& trained,
                                  PositionalEncoding pe) {
  const TaskKind task = parse_task(trained.task);
  // The training window: a sequence at l_train, in tokens.
  const int window = static_cast<int>(tokens_per_sequence(task, trained.token, trained.l_train));
  AttentionSpec a;
  if (t.n_global < 0) throw UsageError(fmt::format("--n-global must be >= 0, got {}", t.n_global));
  if (!t.n_local.empty()) {
    a.window.n_local =
        train_or_count(t.n_local, window, "--n-local", "the tokens of a sequence at l_train");
    a.window.n_global = t.n_global;
  } else if (t.n_global > 0) {
    throw UsageError(fmt::format(
        "--n-global {} has no effect without --n-local: without a window every key is seen; give "
        "--n-local train (LM-Infinite's Λ-mask) or leave --n-global at 0",
        t.n_global));
  }
  if (!t.distance_cap.empty()) {
    if (!positional_encoding_info(pe).relative())
      throw UsageError(fmt::format(
          "--distance-cap {}: the run's positional encoding is {}, which has {}; a distance cap "
          "applies to the encodings of relative distance",
          t.distance_cap, positional_encoding_name(pe),
          positional_encoding_info(pe).absolute()
              ? "absolute position ids, no relative distance to cap"
              : "no positions, so no distances to cap"));
    if (t.distance_cap == "trained") {
      if (!encoding_math(pe).zero_until_trained)
        throw UsageError(fmt::format(
            "--distance-cap trained maps the distances whose learned bias never trained onto the "
            "largest trained one; the run's encoding is {}, whose distances share their "
            "parameters (or have none), so none is untrained: give --distance-cap train (the "
            "largest distance in training) or an integer >= 1",
            positional_encoding_name(pe)));
      // Until prepare_test_time_eval reads the trained model: the training window's.
      a.window.max_distance = window - 1;
    } else {
      a.window.max_distance = train_or_count(
          t.distance_cap, window - 1, "--distance-cap", "the largest distance in training",
          encoding_math(pe).zero_until_trained
              ? ", 'trained' (the largest distance whose learned bias trained)"
              : "");
    }
  }
  if (!t.rope_scaling.empty() && !trained.train_rope_scaling.empty() &&
      parse_rope_scaling(trained.train_rope_scaling) != RopeScalingKind::kNone)
    throw UsageError(fmt::format(
        "--rope-scaling {}: this run is trained with --train-rope-scaling {} (factor {}) and "
        "evaluated with it; a second extension on top of it is not supported: leave "
        "--rope-scaling out",
        t.rope_scaling, trained.train_rope_scaling, trained.train_rope_factor));
  a.rope = rope_scaling_of(t, window, pe);
  a.rope_auto = !t.rope_scaling.empty() && t.rope_factor == "auto" &&
                a.rope.kind != RopeScalingKind::kDynamicNtk;
  if (t.attention_stats != 0 && t.attention_stats != 1)
    throw UsageError(fmt::format(
        "attention_stats must be 0 (off) or 1 (measure the attention statistics), got {}",
        t.attention_stats));
  check_decode(t.decode);
  if (t.decode == "greedy") {
    const TaskKind task = parse_task(trained.task);
    if (!is_token_task(task) || task_every_row_answers(task))
      throw UsageError(fmt::format(
          "--decode greedy scores the answer a token task's model writes after its prompt; task "
          "'{}' has {}: leave --decode out",
          trained.task,
          is_token_task(task) ? "no prompt (every row answers: its score is the teacher-forced "
                                "cross-entropy)"
                              : "no tokens to write (a scalar output)"));
  }
  if (!temperature_alignment(t)) a.logit_scale = 1.0 / fixed_temperature(t.temperature);
  search_grid(t);
  if (t.temperature_scope != "logit" && t.temperature_scope != "content")
    throw UsageError(fmt::format(
        "--temperature-scope must be logit (the temperature divides q.k/sqrt(d) + the positional "
        "bias, paper 002's) or content (q.k/sqrt(d) alone), got '{}'",
        t.temperature_scope));
  if (t.temperature_scope != TestTimeAttention{}.temperature_scope && t.temperature == "1")
    throw UsageError(fmt::format(
        "--temperature-scope {} has no effect at temperature 1: give --temperature (a number or "
        "auto-pmax / auto-entropy), or leave --temperature-scope out",
        t.temperature_scope));
  a.scale_covers_bias = t.temperature_scope == "logit";
  return a;
}

}  // namespace lenlab
