#pragma once
// Inference-side attention methods: how a trained model attends at test time, without retraining
// (`lenlab eval`; docs/methods.md).
//  * LM-Infinite's Λ-shaped mask (../shared/papers/001_d3b40595cd977de8.txt, §3): each query sees
//    the first n_global keys and the last n_local keys (itself included), nothing between.
//    n_local defaults to the training window: the tokens of a sequence at l_train. n_global = 0
//    is a plain sliding window.
//  * LM-Infinite's distance limit: every relative distance beyond D counts as D (ALiBi: the bias
//    is clamped; RoPE: the pair is rotated by the capped distance). D defaults to the largest
//    distance seen in training, the training window's tokens − 1. Inside the local branch
//    distances are below n_local, so with D ≥ n_local − 1 the cap bends the global branch only, as
//    the paper has it. D = "trained" (T5): the largest distance whose bucket training reached, so
//    no test pair reads a bucket still at its initial 0 (train/untrained_bias.hpp).
//  * A softmax temperature τ (paper 002): every attention logit divided by τ; or, per test length
//    past training, the τ that paper 002's Algorithm 1 finds (train/temperature_search.hpp). The
//    logit is q·k/√d plus the encoding's bias, as §3.2 has it (temperature_scope "logit"); the
//    variant "content" divides q·k/√d alone and adds the bias unscaled.
// All three are AttentionSpec data for the one engine (models/attention_spec.hpp).
#include <optional>
#include <string>
#include <vector>

#include "models/attention_spec.hpp"
#include "models/config.hpp"
#include "train/inference_settings.hpp"
#include "train/run_settings.hpp"
#include "train/temperature_search.hpp"

namespace lenlab {

// The test sequences of a length paper 002's search measures on (its first ones; the same for every
// temperature).
inline constexpr int kTemperatureSearchSamples = 64;

// The temperatures a run may use, fixed or searched: logits times 1/τ stay finite in float32 for
// any logit a model reaches, and past either end the attention is already its argmax or uniform.
inline constexpr double kMinTemperature = 1e-3, kMaxTemperature = 1e3;

// The alignment `t.temperature` asks for, if any (test_time_attention checks the text).
std::optional<AlignBy> temperature_alignment(const TestTimeAttention& t);
// UsageError unless `text` is a temperature test_time_attention accepts (checked before a run is
// read, with the other flags).
void check_temperature(const std::string& text);
// The temperature search's grid (temperature_grid(t.temperature_min, t.temperature_step)).
// UsageError naming the flag and the valid range: a lowest τ below kMinTemperature or above 1, a
// step ≤ 0, more than kMaxTemperatureGrid values, or a grid other than the default without an auto
// temperature.
std::vector<double> search_grid(const TestTimeAttention& t);

// UsageError unless `decode` is teacher-forced or greedy (checked before a run is read, as the
// temperature).
void check_decode(const std::string& decode);
// The AttentionSpec of `t` for a run trained with `trained` (its PE in `pe`). UsageError naming
// the flag, the value and what is allowed: n_local not "train" or an integer >= 1; n_global < 0,
// or > 0 without n_local (without a window every key is seen anyway); a distance cap that is not
// "train", "trained" or an integer >= 1, "trained" on an encoding without untrained entries
// (EncodingMath::zero_until_trained; where allowed, the cap is the training window's here and
// prepare_test_time_eval resolves it on the trained model), or one on NoPE (no distances) or
// learned positions (absolute ids: nothing relative to cap); a temperature that is neither a finite
// number > 0 nor auto-pmax or auto-entropy; a temperature_scope other than logit or content, or
// content at temperature 1 (it would change nothing); a decode other than teacher-forced or
// greedy, or greedy for a task without an answer to write (scalar, markov, text). An auto
// temperature leaves logit_scale at 1 (the search sets it per length).
AttentionSpec test_time_attention(const TestTimeAttention& t, const TrainSpec& trained,
                                  PositionalEncoding pe);

}  // namespace lenlab
