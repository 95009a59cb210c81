#pragma once
// THE backend test table (in the manner of ggml's test-backend-ops): one row per (op, shapes,
// options, tolerance). tests/backend_runner.hpp runs every row on CpuBackend<double>, the
// reference, and on each backend under test (CpuBackend<float> in
// tests/models/test_backend_ops.cpp, CudaBackend in tests/cuda/test_cuda_ops.cpp), and checks every
// backward against finite differences. A new option or shape is a new row; a new op is a case
// struct (backend_cases_*.hpp, interface in backend_cases_base.hpp), a member of Case and a name in
// LENLAB_CASE_OPS.
//
// Rows cover one model (K = 1) and three (K = 3) with a parameter stride larger than the tensors,
// different token counts per model (so padding rows) and empty sequence slots.
#include <cmath>
#include <variant>
#include <vector>

#include "tests/models/backend_cases_adamw.hpp"
#include "tests/models/backend_cases_attention.hpp"
#include "tests/models/backend_cases_dense.hpp"
#include "tests/models/backend_cases_seq.hpp"
#include "tests/models/backend_cases_train.hpp"

// The op names of the rows (each row's op()), one test case each per backend.
#define LENLAB_CASE_OPS(X) \
  X(linear)                \
  X(layernorm)             \
  X(gelu)                  \
  X(add_inplace)           \
  X(embedding)             \
  X(prefix_noise)          \
  X(gather_rows)           \
  X(rope)                  \
  X(attention)             \
  X(attention_infer)       \
  X(mse_loss) X(cross_entropy_loss) X(pair_alignment_loss) X(grad_norm) X(adamw_step)

namespace lenlab::test {

using Case = std::variant<LinearCase, LayerNormCase, GeluCase, AddCase, EmbeddingCase,
                          PrefixNoiseCase, GatherRowsCase, RopeCase, AttentionCase, MseCase,
                          CrossEntropyCase, PairAlignmentCase, GradNormCase, AdamWCase>;

inline const std::vector<Case>& backend_cases() {
  using Rope = AttentionCase::Rope;
  using Bias = AttentionCase::Bias;
  // One model: sequences of 1, 4 and 7 tokens, positions 0, 1, 2, …; N = 14.
  const Packing one{{{1, 4, 7}}};
  // Three models of 8, 12 and 4 tokens in N = 14 rows; models 0 and 2 have empty slots.
  const Packing three{{{3, 5}, {6, 2, 4}, {4}}, true};
  const Packing three_plain{{{3, 5}, {6, 2, 4}, {4}}};  // positions 0, 1, 2, …: max δ = 5
  // Longer sequences, for the float accuracy of long sums and a GPU's tiles (no finite
  // differences: too slow, and their small twins above are checked).
  const Packing longer{{{70, 5}, {33, 40, 1}, {20}}, true};
  const Packing longest{{{100}, {64, 37}, {1, 2}}};
  const Tolerance attn{2e-5, 1e-5}, big{1e-4, 1e-5};
  // Sequences the CPU's training attention tiles (≥ cpu::detail::kMinTiledLength tokens): one,
  // narrow enough for finite differences; and several tiles of 64 query rows, checked against the
  // formula and the row path (equivalents()), not by finite differences (too slow under the
  // sanitizers).
  const Packing tiled{{{33, 2}}, true};
  const Packing tiles{{{130, 5}, {70, 33}}, true};

  // Inference rows that also run with the scale covering the bias.
  const AttentionCase fire_query_rows{
      .packing = three,
      .bias = Bias::kByQueryPosition,
      .max_distance = 2,
      .infer = true,
      .query_rows = {{7, 0, 2, -1, 4}, {11, 5, -1, 0, 8}, {3, -1, 6, 2, 0}},
      .tol = attn};
  const AttentionCase bias_tiles{.packing = longer,
                                 .d = 64,
                                 .n_head = 4,
                                 .bias = Bias::kByDistance,
                                 .infer = true,
                                 .tol = big};
  const AttentionCase alibi_scaled_infer{
      .packing = three, .alibi = true, .seq_scale = true, .infer = true, .tol = attn};

  static const std::vector<Case> rows = {
      LinearCase{.K = 1, .N = 5, .C = 4, .OC = 3},
      LinearCase{.K = 3, .N = 6, .C = 5, .OC = 7, .gap = 3},
      LinearCase{.K = 3, .N = 4, .C = 3, .OC = 2, .gap = 2, .bias = false},
      LinearCase{.K = 3, .N = 7, .C = 7, .OC = 1, .gap = 1},
      LinearCase{.K = 2, .N = 33, .C = 64, .OC = 192, .gap = 5, .tol = big, .fd = false},
      LinearCase{.K = 3, .N = 40, .C = 256, .OC = 64, .tol = big, .fd = false},

      LayerNormCase{.K = 1, .N = 4, .C = 6},
      LayerNormCase{.K = 3, .N = 5, .C = 8, .gap = 3},
      LayerNormCase{.K = 3, .N = 20, .C = 64, .gap = 1, .fd = false},

      GeluCase{.n = 40, .scale = 2.0},
      GeluCase{.n = 1000, .scale = 3.0, .fd = false},
      AddCase{.n = 50},
      AddCase{.n = 1000},

      EmbeddingCase{.packing = one},
      EmbeddingCase{.packing = three, .gap = 4},
      EmbeddingCase{.packing = three, .d = 6, .learned = false, .gap = 2},
      EmbeddingCase{.packing = three, .d = 6, .learned = false, .fixed = true, .gap = 2},
      // Vaswani et al.'s √d_model on the token embedding (d 6: an irrational scale), with each
      // kind of position table.
      EmbeddingCase{.packing = three,
                    .d = 6,
                    .learned = false,
                    .fixed = true,
                    .gap = 2,
                    .token_scale = std::sqrt(6.0)},
      EmbeddingCase{.packing = three, .gap = 4, .token_scale = 2.5},
      EmbeddingCase{.packing = one, .d = 4, .learned = false, .token_scale = 2.0},
      EmbeddingCase{.packing = longer, .d = 16, .vocab = 11, .tol = big, .fd = false},

      // Its backward divides by σ of a few rows: float's error reaches ~2e-5 of the largest dx.
      PrefixNoiseCase{.packing = one, .tol = big},
      PrefixNoiseCase{.packing = three, .d = 7, .tol = big},
      PrefixNoiseCase{.packing = longer, .d = 16, .tol = big, .fd = false},

      GatherRowsCase{.N = 6, .d = 4, .rows = {{4, 0, 4, -1, 5}}},
      GatherRowsCase{.N = 5, .d = 3, .rows = {{1, 1, -1}, {0, 4, 2}, {-1, -1, 3}}},

      RopeCase{.packing = one},
      RopeCase{.packing = three, .d = 12},
      RopeCase{.packing = longer, .d = 64, .n_head = 4, .fd = false},

      AttentionCase{.packing = one, .tol = attn},
      AttentionCase{.packing = one, .alibi = true, .tol = attn},
      AttentionCase{.packing = one, .seq_scale = true, .tol = attn},
      AttentionCase{.packing = one, .rope = Rope::kInAttention, .tol = attn},
      AttentionCase{.packing = three, .alibi = true, .seq_scale = true, .tol = attn},
      AttentionCase{.packing = three, .d = 12, .n_head = 4, .alibi = true, .tol = attn},  // hd 3
      AttentionCase{
          .packing = three, .d = 40, .n_head = 2, .alibi = true, .seq_scale = true, .tol = attn},
      AttentionCase{.packing = three, .alibi = true, .n_global = 1, .n_local = 2, .tol = attn},
      AttentionCase{.packing = three, .n_local = 6, .tol = attn},  // reaches every key
      AttentionCase{.packing = three, .alibi = true, .mask_rows = true, .tol = attn},
      AttentionCase{.packing = three, .rope = Rope::kInAttention, .mask_rows = true, .tol = attn},
      // VCL's detached prefix: keys and values that pass no gradient (with rows not read too)
      AttentionCase{.packing = one, .alibi = true, .detach = true, .tol = attn},
      AttentionCase{.packing = three,
                    .rope = Rope::kInAttention,
                    .mask_rows = true,
                    .detach = true,
                    .tol = attn},
      AttentionCase{.packing = three, .rope = Rope::kBefore, .detach = true, .tol = attn},
      AttentionCase{.packing = three, .alibi = true, .max_distance = 2, .tol = attn},
      AttentionCase{.packing = three_plain,
                    .alibi = true,
                    .max_distance = 5,  // caps nothing
                    .rope = Rope::kInAttention,
                    .tol = attn},
      AttentionCase{.packing = three, .seq_scale = true, .rope = Rope::kInAttention, .tol = attn},
      AttentionCase{.packing = three,
                    .n_global = 1,
                    .n_local = 3,
                    .max_distance = 2,
                    .rope = Rope::kInAttention,
                    .tol = attn},
      AttentionCase{.packing = longer,
                    .d = 64,
                    .n_head = 4,
                    .alibi = true,
                    .seq_scale = true,
                    .tol = big,
                    .fd = false},
      AttentionCase{.packing = longest,
                    .d = 64,
                    .n_head = 2,
                    .n_global = 2,
                    .n_local = 16,
                    .max_distance = 24,
                    .rope = Rope::kInAttention,
                    .tol = big,
                    .fd = false},
      // The CPU's tiled training path on every setting it takes, by finite differences
      AttentionCase{.packing = tiled,
                    .d = 4,
                    .bias = Bias::kByDistance,
                    .seq_scale = true,
                    .scale_bias = true,
                    .mask_rows = true,
                    .detach = true,
                    .tol = attn},
      AttentionCase{.packing = tiled,
                    .d = 4,
                    .alibi = true,
                    .n_global = 2,
                    .n_local = 9,
                    .max_distance = 12,
                    .tol = attn},
      AttentionCase{.packing = tiled,
                    .d = 4,
                    .bias = Bias::kByQueryPosition,
                    .rope = Rope::kBefore,
                    .tol = attn},
      AttentionCase{.packing = tiles,
                    .d = 16,
                    .bias = Bias::kByDistance,
                    .seq_scale = true,
                    .scale_bias = true,
                    .mask_rows = true,
                    .detach = true,
                    .tol = big,
                    .fd = false},
      // learned bias tables (t5, kerple; FIRE's by query position): dLoss/db by finite differences
      AttentionCase{.packing = one, .bias = Bias::kByDistance, .tol = attn},
      AttentionCase{.packing = three, .bias = Bias::kByDistance, .seq_scale = true, .tol = attn},
      AttentionCase{.packing = three,
                    .bias = Bias::kByDistance,
                    .n_global = 1,
                    .n_local = 2,
                    .max_distance = 2,
                    .mask_rows = true,
                    .tol = attn},
      AttentionCase{.packing = three,
                    .bias = Bias::kByDistance,
                    .max_distance = 3,
                    .rope = Rope::kInAttention,
                    .tol = attn},
      AttentionCase{.packing = three, .bias = Bias::kByQueryPosition, .tol = attn},
      AttentionCase{.packing = three,
                    .bias = Bias::kByQueryPosition,
                    .n_local = 3,
                    .max_distance = 2,
                    .tol = attn},

      // paper 002's temperature: the sequence's scale multiplies the bias too
      AttentionCase{
          .packing = three, .alibi = true, .seq_scale = true, .scale_bias = true, .tol = attn},
      AttentionCase{.packing = three,
                    .bias = Bias::kByDistance,
                    .seq_scale = true,
                    .scale_bias = true,
                    .tol = attn},
      AttentionCase{.packing = three,
                    .bias = Bias::kByQueryPosition,
                    .seq_scale = true,
                    .scale_bias = true,
                    .n_local = 3,
                    .max_distance = 2,
                    .tol = attn},
      AttentionCase{.packing = three,
                    .seq_scale = true,
                    .scale_bias = true,
                    .rope = Rope::kInAttention,
                    .tol = attn},

      AttentionCase{.packing = one, .infer = true, .tol = attn},
      AttentionCase{.packing = three, .bias = Bias::kByDistance, .infer = true, .tol = attn},
      fire_query_rows,
      bias_tiles,
      alibi_scaled_infer,
      alibi_scaled_infer.scaling_the_bias(),
      fire_query_rows.scaling_the_bias(),
      bias_tiles.scaling_the_bias(),
      AttentionCase{.packing = three,
                    .alibi = true,
                    .n_global = 1,
                    .n_local = 2,
                    .max_distance = 2,
                    .rope = Rope::kInAttention,
                    .infer = true,
                    .query_rows = {{7, 0, 2, -1, 4}, {11, 5, -1, 0, 8}, {3, -1, 6, 2, 0}},
                    .tol = attn},
      AttentionCase{.packing = three,
                    .n_local = 6,
                    .rope = Rope::kInAttention,
                    .infer = true,
                    .query_rows = {{7, 0, 2, -1, 4}, {11, 5, -1, 0, 8}, {3, -1, 6, 2, 0}},
                    .tol = attn},
      AttentionCase{.packing = three_plain, .max_distance = 5, .infer = true, .tol = attn},
      AttentionCase{.packing = three,
                    .alibi = true,
                    .n_global = 1,
                    .n_local = 3,
                    .max_distance = 2,
                    .infer = true,
                    .tol = attn},
      // every row of sequences longer than one tile of query rows (models/cpu/attention_infer.hpp)
      AttentionCase{.packing = longer,
                    .d = 64,
                    .n_head = 4,
                    .alibi = true,
                    .seq_scale = true,
                    .infer = true,
                    .tol = big},
      AttentionCase{.packing = longest,
                    .d = 64,
                    .n_head = 2,
                    .n_global = 2,
                    .n_local = 16,
                    .infer = true,
                    .tol = big},
      AttentionCase{.packing = longer,
                    .d = 64,
                    .n_head = 4,
                    .alibi = true,
                    .infer = true,
                    .query_rows = {{74, 0, 69, 70, -1}, {73, 33, 72, 0, 40}, {19, -1, 0, 5, 10}},
                    .tol = big},

      MseCase{.K = 1, .R = 6},
      MseCase{.K = 3, .R = 8, .zero_weights = true},
      CrossEntropyCase{.K = 1, .R = 5, .V = 7},
      CrossEntropyCase{.K = 3, .R = 4, .V = 6, .skipped_rows = true},
      PairAlignmentCase{.K = 1, .R = 6, .V = 5, .P = 2},
      PairAlignmentCase{.K = 3, .R = 7, .V = 4, .P = 3, .padded = true},
      PairAlignmentCase{.K = 2, .R = 4, .V = 6, .P = 2, .same = true},
      PairAlignmentCase{.K = 1, .R = 6, .V = 5, .P = 2, .entropy = "kl"},
      PairAlignmentCase{.K = 3, .R = 7, .V = 4, .P = 3, .padded = true, .entropy = "kl"},
      // At p = q the divergence is at its minimum: gradient 0, so no finite-difference ratio.
      PairAlignmentCase{.K = 2, .R = 4, .V = 6, .P = 2, .same = true, .entropy = "kl", .fd = false},
      PairAlignmentCase{.K = 2, .R = 6, .V = 5, .P = 3, .entropy = "free"},
      PairAlignmentCase{.K = 2, .R = 80, .V = 70, .P = 40, .tol = big, .fd = false},
      PairAlignmentCase{
          .K = 2, .R = 80, .V = 70, .P = 40, .entropy = "kl", .tol = big, .fd = false},

      GradNormCase{.K = 1, .n = 100},
      GradNormCase{.K = 3, .n = 37, .gap = 13},
      GradNormCase{.K = 2, .n = 100000, .gap = 16},

      AdamWCase{.K = 1, .n = 40, .steps = 2},
      AdamWCase{.K = 3, .n = 40, .gap = 7, .steps = 3, .clip = 1.0, .big = 1, .inf_grad = 2},
      AdamWCase{.K = 3, .n = 30, .gap = 2, .clip = 1.0, .big = 0, .nan_loss = 1},
      AdamWCase{.K = 3, .n = 30, .weight_decay = 0, .inf_grad = 0, .losses = false},
  };
  return rows;
}

}  // namespace lenlab::test
