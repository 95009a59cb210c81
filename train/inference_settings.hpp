#pragma once
// The inference-side attention settings of a run or an evaluation, as a user writes them: how a
// trained model attends at test time. Each is a field of TestTimeAttention and a row of
// visit_test_time_settings below, from which `lenlab train`'s and `lenlab eval`'s flags, the config
// keys, the Python keywords of Run.eval and the page's fields are made.
// train/inference_attention.hpp turns them into the engine's AttentionSpec and says what each
// means. A new test-time setting is its field and row here, and its math there.
#include <string>
#include <vector>

#include "core/setting.hpp"
#include "models/rope_scaling.hpp"

namespace lenlab {

struct TestTimeAttention {
  std::string n_local;  // "": no window; "train": the training window; or a token count
  int n_global = 0;     // with n_local: the first keys every query also sees
  // "": none; "train": the largest training distance; "trained" (t5): the largest distance whose
  // learned bias trained (train/untrained_bias.hpp); or a distance.
  std::string distance_cap;
  // A number > 0, or "auto-pmax" / "auto-entropy": searched per test length.
  std::string temperature = "1";
  // With an auto temperature: the search's grid, 1 down to temperature_min in steps of
  // temperature_step (train/temperature_search.hpp; Algorithm 1's 0.5 and 0.05 by default).
  double temperature_min = 0.5;
  double temperature_step = 0.05;
  // What the temperature divides: "logit", the whole logit q·k/√d + b (paper 002, §3.2), or
  // "content", q·k/√d alone with the positional bias b unscaled (lenlab's before 2026-11-29).
  std::string temperature_scope = "logit";
  // RoPE's context extension (models/rope_scaling.hpp): "" (none), pi, ntk, yarn, dynamic-ntk or
  // yarn-paper;
  // its factor s, a number > 0 or "auto" (per test length: its tokens / the training window's,
  // at least 1); YaRN's ramp bounds in rotations over the training window.
  std::string rope_scaling;
  std::string rope_factor = "auto";
  double yarn_alpha = 1.0;
  double yarn_beta = 32.0;
  // 1: also measure the attention statistics at every test length (attention.csv; they change no
  // result); 0: not.
  int attention_stats = 0;
  // Token tasks: "teacher-forced" (every answer row reads the true earlier tokens: the only
  // scores), or "greedy": also the scores of the answer the model writes, each answer token decoded
  // from its own earlier ones (results.csv's generated_* columns; the teacher-forced ones stay).
  std::string decode = "teacher-forced";
  // No method: the model attends as trained (every row but the measurements at its default).
  bool plain() const;
  // The rows whose value differs from its default, in row order.
  std::vector<Setting> changed() const;
};

// Every test-time setting: visit(row, field).
template <class Attention, class Visit>
void visit_test_time_settings(Attention& t, Visit&& visit) {
  using S = Setting;
  visit(S{.key = "n_local",
          .help = "LM-Infinite's window: each query sees only the last N keys (and the first "
                  "--n-global); 'train' = the tokens of a sequence at l_train",
          .traits = S::kTestTime | S::kWindow,
          .label = "Local window"},
        t.n_local);
  visit(S{.key = "n_global",
          .help = "With --n-local: the first N keys every query also sees (the Λ-mask's global "
                  "branch)",
          .traits = S::kTestTime | S::kWindow,
          .label = "Global tokens"},
        t.n_global);
  visit(S{.key = "distance_cap",
          .help = "alibi, rope, t5, ...: relative distances beyond D count as D; 'train' = the "
                  "largest distance seen in training; 'trained' (t5) = the largest distance whose "
                  "bucket training reached",
          .traits = S::kTestTime | S::kWindow,
          .label = "Distance cap"},
        t.distance_cap);
  visit(S{.key = "temperature",
          .help = "Divide every attention logit by this (softmax temperature; 1 = as trained), or "
                  "auto-pmax / auto-entropy: per length past l_train, the temperature paper 002's "
                  "search aligns with training",
          .traits = S::kTestTime,
          .label = "Temperature"},
        t.temperature);
  visit(S{.key = "temperature_min",
          .help = "With an auto temperature: the lowest temperature the search tries (its grid "
                  "runs from 1 down to this; Algorithm 1's 0.5)",
          .traits = S::kTestTime},
        t.temperature_min);
  visit(S{.key = "temperature_step",
          .help = "With an auto temperature: the search grid's spacing (Algorithm 1's 0.05)",
          .traits = S::kTestTime},
        t.temperature_step);
  visit(S{.key = "temperature_scope",
          .help = "What the temperature divides: logit = the whole logit q.k/sqrt(d) + b, the "
                  "positional bias included (paper 002, section 3.2); content = q.k/sqrt(d) alone, "
                  "the bias added unscaled (a variant; the same as logit for encodings without a "
                  "bias). Choices: {}",
          .traits = S::kTestTime,
          .choices = [] { return std::string("logit, content"); },
          .label = "Temperature divides",
          .in_id_when = "temperature"},
        t.temperature_scope);
  visit(S{.key = "attention_stats",
          .help = "Also write attention.csv: per length, layer and head the mean attention entropy "
                  "and largest attention probability",
          .traits = S::kTestTime | S::kSwitch | S::kMeasureOnly},
        t.attention_stats);
  visit(S{.key = "decode",
          .help = "Token tasks: greedy = also score the answer the model writes, each answer token "
                  "its argmax given its own earlier answer tokens (from a key-value cache), per "
                  "token and per sequence beside the teacher-forced scores (results.csv's "
                  "generated_token_accuracy and generated_exact_match). Choices: {}",
          .traits = S::kTestTime | S::kMeasureOnly,
          .choices = [] { return std::string("teacher-forced, greedy"); },
          .label = "Decoding"},
        t.decode);
  visit(S{.key = "rope_scaling",
          .help = "rope at test time: a context extension, {} (position interpolation, NTK-aware "
                  "base, YaRN's ramp and logit scale, NTK by each length, YaRN with the paper's "
                  "ramp in rotations instead of the field's in pair index)",
          .traits = S::kTestTime,
          .choices = [] { return join_choices(rope_extension_names()); }},
        t.rope_scaling);
  visit(S{.key = "rope_factor",
          .help = "With --rope-scaling: its factor s, or auto = per test length, its tokens / the "
                  "training window's (dynamic-ntk: HF's factor, auto = 1)",
          .traits = S::kTestTime},
        t.rope_factor);
  visit(S{.key = "yarn_alpha",
          .help = "yarn, yarn-paper: pairs turning fewer times than this over the training window "
                  "are interpolated (the paper's 1)",
          .traits = S::kTestTime,
          .in_id_when = "rope_scaling=yarn,train_rope_scaling=yarn"},
        t.yarn_alpha);
  visit(S{.key = "yarn_beta",
          .help = "yarn, yarn-paper: pairs turning more times than this are kept (the paper's 32)",
          .traits = S::kTestTime,
          .in_id_when = "rope_scaling=yarn,train_rope_scaling=yarn"},
        t.yarn_beta);
}

inline std::vector<Setting> TestTimeAttention::changed() const {
  // Each row's value as text, this one's against the defaults', row by row.
  const auto text = [](const auto& value) { return fmt::format("{}", value); };
  const TestTimeAttention base;
  std::vector<std::string> defaults;
  visit_test_time_settings(
      base, [&](const Setting&, const auto& value) { defaults.push_back(text(value)); });
  std::vector<Setting> out;  // copies: the visit's rows are temporaries
  size_t i = 0;
  visit_test_time_settings(*this, [&](const Setting& row, const auto& value) {
    if (text(value) != defaults[i]) out.push_back(row);
    ++i;
  });
  return out;
}

inline bool TestTimeAttention::plain() const {
  for (const Setting& row : changed())
    if (!row.has(Setting::kMeasureOnly)) return false;
  return true;
}

}  // namespace lenlab
