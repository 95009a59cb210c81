#pragma once
// RoPE context-extension methods as angle tables: how a model trained on `original_length` tokens
// rotates q and k when it is run on longer sequences. Each method changes only the angles
// angle(p, m) = p · position_scale · θ_m of pair m (and, for YaRN, the attention logits' scale);
// the rotation itself is models/cpu/rope.hpp's. An AttentionSpec (models/attention_spec.hpp) names
// the one a batch is evaluated with at test time; ModelConfig::rope_scaling the one it trains with.
//   - PI, position interpolation (Chen et al. 2023, "Extending Context Window of Large Language
//     Models via Positional Interpolation"): positions divided by s.
//   - NTK-aware scaling (bloc97, 2023, r/LocalLLaMA "NTK-Aware Scaled RoPE"): the base raised to
//     base · s^(hd/(hd−2)), so the highest frequency is unchanged and the lowest is divided by s.
//   - Dynamic NTK (Hugging Face transformers' DynamicNTKScalingRotaryEmbedding): NTK-aware with the
//     scale recomputed from the sequence's own length, plain up to the training length.
//   - YaRN (Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language
//     Models"): "NTK-by-parts" interpolation, pairs that turn many times over the training context
//     kept, pairs that turn less than once interpolated like PI, a linear ramp in between, plus the
//     attention scale √(1/t) = 0.1 ln s + 1 on q and k, so logits × (0.1 ln s + 1)². Two ramps:
//     `yarn` is the one the field runs (the YaRN authors' code and Hugging Face transformers'
//     _compute_yarn_parameters): linear in the pair index m between the indices where a pair turns
//     β and α times over the training context, those rounded outwards (floor, ceil) and clamped to
//     [0, hd − 1]; `yarn-paper` is the paper's ramp γ(r) of "NTK-by-parts" interpolation, linear in
//     the rotations r themselves. They differ most on short contexts: below 2π·β ≈ 201 training
//     tokens the fastest pair turns fewer than β times, so the paper's ramp interpolates it while
//     the field's keeps it.
// With factor 1 every kind gives the plain table θ_m = base^(−2m/hd) bit for bit (dynamic NTK: for
// sequences up to original_length). A factor < 1 is allowed (it compresses instead of stretching:
// PI then spreads positions out, NTK lowers the base); a factor must be finite and > 0.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace lenlab {

enum class RopeScalingKind { kNone, kPi, kNtk, kYarn, kDynamicNtk, kYarnPaper };

struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::kNone;
  double factor = 1.0;      // s >= 1 in use; the caller resolves "auto" (test length / training
                            // length) before. kNone ignores it.
  int original_length = 0;  // tokens the model was trained on (YaRN's and dynamic NTK's L_orig),
                            // > 0 for yarn/dynamic-ntk
  double yarn_alpha = 1.0;  // YaRN's ramp bounds in rotations per original context (beta_slow = 1,
  double yarn_beta = 32.0;  // beta_fast = 32 in the YaRN paper/HF)
};

// What the angle table of one (scaling, s) is: angle(p, m) = p * position_scale * theta[m],
// m = 0..hd/2-1.
struct RopeAngles {
  double position_scale = 1.0;  // PI: 1/s; else 1
  std::vector<double> theta;    // [hd/2] per-pair frequency after scaling
  double logit_scale = 1.0;     // YaRN: (0.1 ln s + 1)^2 (the paper's sqrt(1/t) = 0.1 ln s + 1
                                // applied to q and k); else 1
};

namespace rope_scaling_detail {

struct Row {
  RopeScalingKind kind;
  const char* name;
};
// The one list of kinds and their names.
inline constexpr Row kRows[] = {{RopeScalingKind::kNone, "none"},
                                {RopeScalingKind::kPi, "pi"},
                                {RopeScalingKind::kNtk, "ntk"},
                                {RopeScalingKind::kYarn, "yarn"},
                                {RopeScalingKind::kYarnPaper, "yarn-paper"},
                                {RopeScalingKind::kDynamicNtk, "dynamic-ntk"}};

// θ_m = base^(−2m/hd), computed exactly as models/cpu/rope.hpp computes it.
inline std::vector<double> plain_theta(int head_dim, double base) {
  std::vector<double> theta(static_cast<size_t>(head_dim / 2));
  for (int m = 0; m < head_dim / 2; ++m)
    theta[static_cast<size_t>(m)] = std::pow(base, -2.0 * m / head_dim);
  return theta;
}

// NTK-aware base' = base · s^(hd/(hd−2)); base itself when s == 1 (pow(1, x) == 1 exactly). With
// hd == 2 the only pair has θ_0 = 1 whatever the base, so the base is left alone.
inline double ntk_base(double base, double s, int head_dim) {
  if (s == 1.0 || head_dim <= 2) return base;
  return base * std::pow(s, static_cast<double>(head_dim) / (head_dim - 2));
}

// The YaRN references' pair index at which a pair turns `rotations` times over L0 tokens:
// θ_m·L0 / 2π = rotations solved for m (continuous), m = hd·ln(L0 / (2π·rotations)) / (2 ln base).
inline double yarn_correction_index(double rotations, int head_dim, double base, int L0) {
  const double two_pi = 2.0 * 3.14159265358979323846264338327950288;
  return head_dim * std::log(L0 / (rotations * two_pi)) / (2.0 * std::log(base));
}

}  // namespace rope_scaling_detail

// Either YaRN: the field's ramp or the paper's.
inline bool is_yarn(RopeScalingKind kind) {
  return kind == RopeScalingKind::kYarn || kind == RopeScalingKind::kYarnPaper;
}

inline std::vector<std::string> rope_scaling_names() {
  std::vector<std::string> names;
  for (const auto& row : rope_scaling_detail::kRows) names.emplace_back(row.name);
  return names;
}

// The extensions a user can ask for (--rope-scaling): every name but "none".
inline std::vector<std::string> rope_extension_names() {
  std::vector<std::string> names;
  for (const auto& row : rope_scaling_detail::kRows)
    if (row.kind != RopeScalingKind::kNone) names.emplace_back(row.name);
  return names;
}

inline RopeScalingKind parse_rope_scaling(const std::string& name) {
  for (const auto& row : rope_scaling_detail::kRows)
    if (name == row.name) return row.kind;
  throw UsageError(fmt::format("unknown rope scaling '{}'; valid choices: {}", name,
                               join_choices(rope_scaling_names())));
}

inline std::string rope_scaling_name(RopeScalingKind kind) {
  for (const auto& row : rope_scaling_detail::kRows)
    if (kind == row.kind) return row.name;
  throw std::logic_error("rope_scaling_name: not a RopeScalingKind");
}

// YaRN's logit multiplier (0.1 ln s + 1)² for factor s > 1; 1 otherwise and for every other kind.
inline double rope_logit_scale(const RopeScaling& s) {
  if (!is_yarn(s.kind) || !(s.factor > 1.0)) return 1.0;
  const double t = 0.1 * std::log(s.factor) + 1.0;
  return t * t;
}

// The angle table for a sequence of `tokens` tokens (its largest position + 1; dynamic NTK reads
// it, the others ignore it). Plain: theta_m = base^(-2m/hd). Throws UsageError for a factor that is
// not finite and > 0, for yarn/dynamic-ntk without original_length > 0, and for a YaRN ramp
// without 0 < alpha < beta (both finite); std::invalid_argument for a head_dim that is not even
// and > 0 or a base that is not finite and > 0 (the model config has checked those).
inline RopeAngles rope_angles(const RopeScaling& s, int head_dim, double base, int tokens) {
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw std::invalid_argument(
        fmt::format("rope_angles: head_dim must be even and > 0, got {}", head_dim));
  if (!(std::isfinite(base) && base > 0))
    throw std::invalid_argument(fmt::format("rope_angles: base must be > 0, got {}", base));
  const std::string name = rope_scaling_name(s.kind);
  if (!(std::isfinite(s.factor) && s.factor > 0))
    throw UsageError(fmt::format("the {} rope scaling factor must be a finite number > 0, got {}",
                                 name, s.factor));
  if ((is_yarn(s.kind) || s.kind == RopeScalingKind::kDynamicNtk) && s.original_length <= 0)
    throw UsageError(
        fmt::format("{} rope scaling needs the training length (original length) > 0, got {}", name,
                    s.original_length));
  if (is_yarn(s.kind) &&
      !(std::isfinite(s.yarn_beta) && s.yarn_alpha > 0 && s.yarn_alpha < s.yarn_beta))
    throw UsageError(fmt::format("{}'s ramp needs 0 < alpha < beta, got alpha {} and beta {}", name,
                                 s.yarn_alpha, s.yarn_beta));

  RopeAngles out;
  out.theta = rope_scaling_detail::plain_theta(head_dim, base);
  const double f = s.factor;
  switch (s.kind) {
    case RopeScalingKind::kNone:
      break;
    case RopeScalingKind::kPi:
      out.position_scale = 1.0 / f;  // exactly 1 when f == 1
      break;
    case RopeScalingKind::kNtk:
      if (f != 1.0)
        out.theta = rope_scaling_detail::plain_theta(
            head_dim, rope_scaling_detail::ntk_base(base, f, head_dim));
      break;
    case RopeScalingKind::kDynamicNtk:
      if (tokens > s.original_length) {
        // HF: base · ((factor · L / L_orig) − (factor − 1))^(hd/(hd−2)); with factor 1 the scale is
        // L / L_orig bit for bit (1.0 · L is exact, and so is subtracting 0).
        const double scale = (f * tokens) / s.original_length - (f - 1.0);
        out.theta = rope_scaling_detail::plain_theta(
            head_dim, rope_scaling_detail::ntk_base(base, scale, head_dim));
      }
      break;
    case RopeScalingKind::kYarn: {
      if (f == 1.0) break;  // θ/1·ramp + θ·(1 − ramp) need not round back to θ
      // The references' correction range in pair indices, rounded outwards and clamped; a ramp of
      // width 0 widened by 0.001 (their guard against dividing by 0).
      using rope_scaling_detail::yarn_correction_index;
      const int L0 = s.original_length;
      const double low =
          std::max(std::floor(yarn_correction_index(s.yarn_beta, head_dim, base, L0)), 0.0);
      double high = std::min(std::ceil(yarn_correction_index(s.yarn_alpha, head_dim, base, L0)),
                             static_cast<double>(head_dim - 1));
      if (low == high) high += 0.001;
      for (size_t m = 0; m < out.theta.size(); ++m) {
        // ramp 0: the pair is kept (extrapolated); 1: interpolated like PI
        const double ramp = std::clamp((static_cast<double>(m) - low) / (high - low), 0.0, 1.0);
        out.theta[m] = out.theta[m] / f * ramp + out.theta[m] * (1.0 - ramp);
      }
      out.logit_scale = rope_logit_scale(s);
      break;
    }
    case RopeScalingKind::kYarnPaper: {
      if (f == 1.0) break;  // (1 − γ)·θ + γ·θ need not round back to θ
      const double two_pi = 2.0 * 3.14159265358979323846264338327950288;
      for (double& theta : out.theta) {
        const double wavelength = two_pi / theta;
        const double r = s.original_length / wavelength;  // rotations over the training context
        const double gamma = r < s.yarn_alpha  ? 0.0
                             : r > s.yarn_beta ? 1.0
                                               : (r - s.yarn_alpha) / (s.yarn_beta - s.yarn_alpha);
        theta = (1.0 - gamma) * theta / f + gamma * theta;
      }
      out.logit_scale = rope_logit_scale(s);
      break;
    }
  }
  return out;
}

}  // namespace lenlab
