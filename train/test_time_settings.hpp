#pragma once
// The inference-side attention settings of a run or an evaluation, as a user writes them (flags of
// `lenlab train` and `lenlab eval`, config keys n_local, n_global, distance_cap, temperature,
// temperature_min, temperature_step, attention_stats):
// how a trained model attends at test time. train/test_time_attention.hpp turns them into the
// engine's AttentionSpec and says what each means.
#include <string>

namespace lenlab {

struct TestTimeAttention {
  std::string n_local;       // "": no window; "train": the training window; or a token count
  int n_global = 0;          // with n_local: the first keys every query also sees
  std::string distance_cap;  // "": none; "train": the largest training distance; or a distance
  // A number > 0, or "auto-pmax" / "auto-entropy": searched per test length.
  std::string temperature = "1";
  // With an auto temperature: the search's grid, 1 down to temperature_min in steps of
  // temperature_step (train/temperature_search.hpp; Algorithm 1's 0.5 and 0.05 by default).
  double temperature_min = 0.5;
  double temperature_step = 0.05;
  // RoPE's context extension (core/rope_scaling.hpp): "" (none), pi, ntk, yarn or dynamic-ntk;
  // its factor s, a number > 0 or "auto" (per test length: its tokens / the training window's,
  // at least 1); YaRN's ramp bounds in rotations over the training window.
  std::string rope_scaling;
  std::string rope_factor = "auto";
  double yarn_alpha = 1.0;
  double yarn_beta = 32.0;
  // 1: also measure the attention statistics at every test length (attention.csv; they change no
  // result); 0: not.
  int attention_stats = 0;
  // No method: the model attends as trained (whether statistics are measured or not).
  bool plain() const {
    return n_local.empty() && distance_cap.empty() && temperature == "1" && rope_scaling.empty();
  }
};

}  // namespace lenlab
