#pragma once
// How a model attends over one batch: the one struct through which every attention setting reaches
// the kernels. Its window (which keys a query sees, which distances are capped) is the kernels'
// own ops::AttentionWindow (models/ops/args.hpp), copied into AttentionArgs whole; the logit scales
// become the packed batch's per-sequence multipliers; the RoPE extension its angle tables
// (models/rope_scaling.hpp). The default is plain causal attention, the training setting of every
// task; the test-time methods (train/inference_attention.hpp) fill in the rest.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "models/ops/args.hpp"
#include "models/rope_scaling.hpp"

namespace lenlab {

struct AttentionSpec {
  // LM-Infinite's Λ-shaped mask (n_global, n_local) and the relative-distance cap (max_distance).
  ops::AttentionWindow window;
  double logit_scale = 1.0;  // multiplies every logit: 1/temperature
  // The scales multiply the positional bias too: paper 002's temperature (§3.2: T5's bias is added
  // to q·k and "the summation becomes the input to the temperature-scaled Softmax"). false: they
  // multiply q·k alone, the bias added unscaled (lenlab's temperature before 2026-11-29, kept as
  // the content-only variant). No bias (NoPE, RoPE, absolute positions): the two are one.
  bool scale_covers_bias = true;
  // Optional extra multiplier by sequence length in tokens: entry L for a sequence of L tokens
  // (the last entry for longer ones). Empty: none.
  std::vector<double> logit_scale_by_length;
  // RoPE's context extension at test time: the kind, its factor, and the training length in
  // tokens (rope.original_length). rope_auto: the factor is, per batch, max(1, tokens /
  // original_length) for its longest sequence (largest position + 1).
  RopeScaling rope;
  bool rope_auto = false;

  // The scaling for a batch whose largest position is max_position: this spec's (at test time),
  // else `trained`, the one the model was trained with (ModelConfig::rope_scaling).
  RopeScaling rope_at(int max_position, const RopeScaling& trained) const {
    if (rope.kind == RopeScalingKind::kNone) return trained;
    RopeScaling r = rope;
    if (rope_auto && rope.original_length > 0)
      r.factor = std::max(1.0, static_cast<double>(max_position + 1) / rope.original_length);
    return r;
  }

  // Whether models attending by this and by `o` can run as one batch: the same windows, RoPE
  // extension and temperature scope (their logit scales are per sequence).
  bool batches_with(const AttentionSpec& o) const {
    return window.n_global == o.window.n_global && window.n_local == o.window.n_local &&
           window.max_distance == o.window.max_distance && rope.kind == o.rope.kind &&
           rope.factor == o.rope.factor && rope_auto == o.rope_auto &&
           scale_covers_bias == o.scale_covers_bias;
  }

  // The multiplier of a sequence of `tokens` tokens.
  double scale_for(int tokens) const {
    if (logit_scale_by_length.empty()) return logit_scale;
    const size_t i = static_cast<size_t>(tokens) < logit_scale_by_length.size()
                         ? static_cast<size_t>(tokens)
                         : logit_scale_by_length.size() - 1;
    return logit_scale * logit_scale_by_length[i];
  }
};

}  // namespace lenlab
