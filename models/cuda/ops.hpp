#pragma once
// The CUDA backend's operations: the same operations as models/cpu, forward and backward, with
// the CPU backend's argument lists (outputs, inputs, weights, sizes) and two additions:
//
// * Many models at once. `Models{K, P}` runs the operation for K models of the same shape side by
//   side, in one launch: model k's parameters (and parameter gradients) start k·P elements past
//   the pointer given; every activation tensor is [K, rows, cols], contiguous, so model k's block
//   starts k·rows·cols elements in. The default, Models{1, 0}, is one model: the CPU signature.
// * Packed sequences on the device. `offsets` is a device array [K, S + 1]: model k's sequence s
//   occupies its rows offsets[k·(S+1) + s] .. offsets[k·(S+1) + s + 1] (rows counted from model
//   k's first row). Models' batches hold different token counts, so each model has `rows` rows
//   (SeqLayout::rows ≥ its offsets[k·(S+1) + S]); rows past a model's last sequence are padding.
//   Sequence slots may be empty (offsets equal): a model with fewer sequences pads with those.
//   The sequence operations (embedding, RoPE, attention) write 0 in padding rows; row-wise ones
//   (linear, layer norm, GELU) treat them like any row, so they hold finite values. Gradients
//   reach padding rows only as 0 (the EOS gather and attention never write there), so padding
//   adds nothing to any parameter gradient.
//
// The rule for gradients, the same in both backends: every backward ADDS INTO its gradient
// outputs (dinp, dw, db, ...), so callers zero them first; none assigns.
//
// All pointers are device pointers unless a comment says otherwise. Every launch is checked
// (models/cuda/check.hpp); all work goes to the calling thread's default stream, in order.
#include <cstddef>
#include <cstdint>

namespace lenlab::cuda {

struct Models {
  int count = 1;            // K
  size_t param_stride = 0;  // P: elements between model k's and model k+1's parameters
};

struct SeqLayout {
  int rows = 0;           // N: rows (tokens, padding included) per model
  size_t att_stride = 0;  // elements of the attention-probability tensor per model
};

// ---- linear (cuBLAS) ----
// out [K, N, OC] = inp [K, N, C] · w [C, OC] + b [OC]; b may be null.
void linear_forward(float* out, const float* inp, const float* w, const float* b, int N, int C,
                    int OC, Models m = {});
// Adds into dinp [K, N, C], dw [C, OC], db [OC] (any may be null to skip it).
void linear_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, int N, int C, int OC, Models m = {});

// ---- layer norm over the feature axis, eps 1e-5 (models/cpu/layernorm.hpp) ----
// out [K, N, C], mean and rstd [K, N] (saved for the backward).
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* g,
                       const float* b, int N, int C, Models m = {});
// Adds into dinp [K, N, C], dg [C], db [C].
void layernorm_backward(float* dinp, float* dg, float* db, const float* dout, const float* inp,
                        const float* g, const float* mean, const float* rstd, int N, int C,
                        Models m = {});

// ---- GELU, tanh approximation (models/cpu/gelu.hpp); elementwise over n entries ----
// out [n] = gelu(inp), th [n] = the tanh it used.
void gelu_forward(float* out, float* th, const float* inp, size_t n);
// Adds into dinp [n].
void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, size_t n);

// y [n] += x [n] (the residual connections).
void add_inplace(float* y, const float* x, size_t n);

// ---- embedding and the EOS gather (models/cpu/embedding.hpp) ----
// out [K, N, d] = wte[token] + wpe[position] (wpe may be null); padding rows 0.
// tokens [K, N] device.
void embedding_forward(float* out, const int* tokens, const int* offsets, int n_seq,
                       const float* wte, const float* wpe, int d, SeqLayout lay, Models m = {});
// Adds into dwte [vocab, d] and dwpe [positions, d] (if not null). Deterministic (no atomics).
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens,
                        const int* offsets, int n_seq, int d, SeqLayout lay, Models m = {});
// out [K, S, d] = the last row of each sequence of inp [K, N, d]; empty sequences give 0.
void gather_last_forward(float* out, const float* inp, const int* offsets, int n_seq, int d,
                         SeqLayout lay, Models m = {});
// Adds into dinp's last row of each non-empty sequence.
void gather_last_backward(float* dinp, const float* dout, const int* offsets, int n_seq, int d,
                          SeqLayout lay, Models m = {});

// ---- RoPE (models/cpu/rope.hpp) ----
// cos, sin [positions, hd/2] device copies of cpu::RopeTable<float>, covering the longest
// sequence. out [K, N, 3d] = qkv with q and k rotated, v copied; padding rows 0.
void rope_forward(float* out, const float* inp, const int* offsets, int n_seq, int d, int n_head,
                  const float* cos, const float* sin, SeqLayout lay, Models m = {});
// Adds into dinp [K, N, 3d].
void rope_backward(float* dinp, const float* dout, const int* offsets, int n_seq, int d, int n_head,
                   const float* cos, const float* sin, SeqLayout lay, Models m = {});

// ---- causal multi-head attention (models/cpu/attention.hpp) ----
struct AttentionOptions {
  const float* alibi_slopes = nullptr;  // device [n_head], or null for no bias
  float logit_scale = 1;
};
// att_offsets [K, S + 1] device: sequence s's probability blocks (n_head blocks of L_s × L_s,
// row i = query i, entries j > i are 0) start at att + k·att_stride + att_offsets[k·(S+1) + s],
// as cpu::attention_offsets computes them per model. out [K, N, d]: padding rows 0.
void attention_forward(float* out, float* att, const float* qkv, const int* offsets,
                       const int64_t* att_offsets, int n_seq, int d, int n_head,
                       const AttentionOptions& opt, SeqLayout lay, Models m = {});
// Adds into dqkv [K, N, 3d]. scratch: K·att_stride floats of workspace (dLoss/dlogits).
// Deterministic (no atomics).
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att,
                        const int* offsets, const int64_t* att_offsets, int n_seq, int d,
                        int n_head, const AttentionOptions& opt, float* scratch, SeqLayout lay,
                        Models m = {});

// ---- loss, gradient norm, AdamW (models/loss.hpp, models/optimizer.hpp) ----
// Per model k: loss[k] = Σ_s w_s (pred_s − target_s)² over its first n_seq[k] of S slots, with
// w_s = weights[k·S + s], or 1/n_seq[k] when weights is null; dpred [K, S] = 2 w_s (pred − target)
// (0 in empty slots). Accumulated in double as on the CPU. pred [K, S] float; target, weights
// [K, S] double; n_seq [K] int; loss [K] double.
void mse_loss(const float* pred, const double* target, const double* weights, const int* n_seq,
              int S, float* dpred, double* loss, int K);

// norms [K] = the L2 norm of each model's n gradients (accumulated in double; deterministic).
void grad_norm(const float* grads, size_t n, double* norms, Models m = {});

// One model's AdamW step settings (models/optimizer.hpp), filled on the host every step.
struct AdamWStep {
  float lr = 0;  // this step's scheduled learning rate
  float beta1 = 0, beta2 = 0, eps = 0;
  float decay = 0;       // lr · weight_decay (decoupled decay p ← p − decay·p on matrices)
  float c1 = 1, c2 = 1;  // bias corrections 1/(1 − β1^t), 1/(1 − β2^t)
  double clip_norm = 0;  // > 0: gradients scaled by clip/(norm + 1e-6) when norm > clip
};
// For each model whose norms[k] (and losses[k], if losses is not null) is finite: clips its
// gradients by global norm as clip_grad_norm does (the gradients are left unchanged; the scaled
// value is used), then applies AdamW. A model with a non-finite norm or loss is left untouched
// (the CPU trainer stops such a run before its step). params, grads, m1, m2 per model [n];
// decay_mask [n] (shared; 1 where weight decay applies); steps [K] device.
void adamw_step(float* params, const float* grads, float* m1, float* m2, const float* decay_mask,
                const AdamWStep* steps, const double* norms, const double* losses, size_t n,
                Models m = {});

}  // namespace lenlab::cuda
