#pragma once
// The argument structs that every backend's operations share (models/cpu/, models/cuda/). An
// operation has the same name and the same arguments, in the same order, on every backend:
// outputs, inputs, weights, sizes, then these structs; pointers point into the backend's memory
// (host memory for cpu::, device memory for cuda::).
//
// * Many models at once. `Models{K, P}` runs the operation for K models of the same shape side by
//   side: model k's parameters (and parameter gradients) start k·P elements past the pointer
//   given; every activation tensor is [K, rows, cols], contiguous, so model k's block starts
//   k·rows·cols elements in. The default, Models{1, 0}, is one model.
// * Packed sequences. `Seqs` describes each model's packed batch: model k's sequence s occupies
//   its rows offsets[k·(S+1) + s] .. offsets[k·(S+1) + s + 1] (counted from model k's first row);
//   models' batches hold different token counts, so each has `rows` rows (≥ its last offset) and
//   the rows past it are padding. Empty sequence slots (equal offsets) pad models with fewer
//   sequences. Sequence operations (embedding, RoPE, attention) write 0 in padding rows; row-wise
//   ones (linear, layer norm, GELU) treat them like any row. Gradients reach padding rows only as
//   0, so padding adds nothing to any parameter gradient.
// * Positions are data: positions[k·N + t] is row t's position id, used by learned positions
//   (the table row), RoPE (the angle) and ALiBi and distance caps (pos_i − pos_j). Within a
//   sequence they must not decrease. Tasks give 0, 1, 2, … by default; randomized positions are
//   other numbers.
//
// The rule for gradients, the same on every backend: every backward ADDS INTO its gradient
// outputs, so callers zero them first; none assigns.
#include <cstddef>
#include <cstdint>

// Callable from host code and CUDA kernels alike.
#ifdef __CUDACC__
#define LENLAB_HOST_DEVICE __host__ __device__
#else
#define LENLAB_HOST_DEVICE
#endif

namespace lenlab::ops {

struct Models {
  int count = 1;            // K
  size_t param_stride = 0;  // P: elements between model k's and model k+1's parameters
};

struct Seqs {
  const int* offsets = nullptr;    // [K, S + 1]
  const int* positions = nullptr;  // [K, N]
  int n_seq = 0;                   // S: sequence slots per model
  int rows = 0;                    // N: rows per model, padding included
};

// Where the training forward keeps the softmax probabilities for the backward: for model k,
// sequence s and head h an [L_s, L_s] block (row i = query i; masked entries 0) starting at
// k·stride + offsets[k·(S+1) + s] + h·L_s². attention_offsets() (models/ops/tables.hpp)
// computes the offsets of one model.
struct ProbLayout {
  const int64_t* offsets = nullptr;  // [K, S + 1]
  size_t stride = 0;                 // elements per model
};

// Which keys a query sees and how far apart they count (a batch's AttentionSpec's, models/
// attention_spec.hpp; all zero: plain causal attention).
struct AttentionWindow {
  int n_global = 0;      // with n_local > 0: query i sees key j only when j < n_global or
  int n_local = 0;       //   i − j < n_local (LM-Infinite's Λ-shaped mask)
  int max_distance = 0;  // > 0: the relative distance pos_i − pos_j is capped at it

  // Plain causal attention: no per-key branches.
  LENLAB_HOST_DEVICE bool plain() const { return n_local <= 0 && max_distance <= 0; }
  // δ capped at max_distance.
  LENLAB_HOST_DEVICE int capped(int delta) const {
    return max_distance > 0 && delta > max_distance ? max_distance : delta;
  }
  // True for the key rows that query row i (both counted within its sequence) may attend to.
  LENLAB_HOST_DEVICE bool admits(int i, int j) const {
    return j <= i && (n_local <= 0 || j < n_global || i - j < n_local);
  }
};

// What attention may look at, and how (the logit of query i and key j of one head):
//   s_ij = scale_s · q_i·k_j / √hd + c_s · b_h(r_i, δ_ij),   δ_ij = min(pos_i − pos_j,
//   max_distance)
// with c_s = scale_s when seq_scale_bias (paper 002's temperature, §3.2: τ divides the whole logit,
// scale_s = 1/τ), else 1 (the scale multiplies q·k alone);
// for keys j ≤ i (by row) that the window admits. b is the positional encoding's additive bias
// (ALiBi's −m_h·δ, T5's buckets, KERPLE, a user's expression: models/position_bias.hpp), a table
// by head, row r_i and distance; r_i = 0 for a bias of the distance alone, pos_i for one that also
// depends on the query's position (FIRE). With rope_cos/rope_sin set, q_i·k_j is taken after
// rotating the pair by the angle δ_ij·θ (RoPE applied inside attention, by relative distance, so a
// cap can bend it); without them, RoPE (if any) was applied to q and k beforehand.
template <class T>
struct AttentionArgs {
  // [K?, n_head, bias_rows, bias_cols]: b_h(r, δ) at ((h·bias_rows + r)·bias_cols + δ), model k's
  // table k·bias_stride further (stride 0: the K models share one). Null: no bias.
  const T* bias = nullptr;
  int bias_rows = 1;       // 1: a bias of δ alone; else > every query position
  int bias_cols = 0;       // > every (capped) distance
  size_t bias_stride = 0;  // elements between models' tables
  // Backward only: dLoss/db in bias's layout (bias_stride > 0 when K > 1), added into. The
  // backward then needs its scratch (ProbLayout-sized) on every backend. Null: not wanted.
  T* dbias = nullptr;
  const T* seq_scale = nullptr;  // [K, S] logit multiplier per sequence (1/temperature); null = 1
  bool seq_scale_bias = false;   // seq_scale multiplies the bias too (c_s above); false: q·k only
  AttentionWindow window;        // the Λ-mask and the distance cap
  const T* rope_cos = nullptr;  // [distances, hd/2] cos(δ·θ_k) and sin(δ·θ_k), for δ up to the
  const T* rope_sin = nullptr;  //   longest distance (capped) in the batch; null: no RoPE here
  // Training forward and backward only: [K, N], 0 at the rows whose output nothing reads (the last
  // layer's, past the heads' rows). Such a row gets output 0, probabilities 0 and no gradient
  // work. Null: every row is read.
  const int* row_read = nullptr;
  // Backward only: [K, N], 1 at the rows whose keys and values are constants to the rest (VCL's
  // detached prefix, train/vcl.hpp): no gradient reaches them through any query, and a detached
  // row whose output gradient is all 0 skips its query work too. Null: none.
  const int* row_detached = nullptr;
  // Inference only (attention_infer): [K, Q, n_head, 2], each query row's attention entropy in
  // nats and its largest probability, per head (the attention diagnostics and the temperature
  // search of docs/methods.md); padding rows 0. Null: not computed.
  T* row_stats = nullptr;
  // Inference only: query rows of a sequence, however few, as one product over its keys (the CPU's
  // tiles), not key by key: decoding's one new row over a long cache. The last bits then differ
  // from the row path's, so evaluation, whose scalar tasks read one row per sequence, keeps it
  // off. The GPU's kernels are the same either way.
  bool tile_few_rows = false;

  // Head h's bias table of model k (null: none), and within it the row of a query at position pos.
  LENLAB_HOST_DEVICE const T* bias_table(int k, int h) const {
    return bias ? bias + static_cast<size_t>(k) * bias_stride +
                      static_cast<size_t>(h) * bias_rows * bias_cols
                : nullptr;
  }
  LENLAB_HOST_DEVICE int bias_row(int pos) const { return bias_rows > 1 ? pos * bias_cols : 0; }

  LENLAB_HOST_DEVICE bool admits(int i, int j) const { return window.admits(i, j); }
};

// One model's AdamW step settings (models/optimizer.hpp), filled on the host every step, in
// double; each backend rounds them to its scalar type where it applies them.
struct AdamWStep {
  double lr = 0;  // this step's scheduled learning rate
  double beta1 = 0, beta2 = 0, eps = 0;
  // 1 − β1 and 1 − β2, subtracted in double: a float β2 = 0.999 is 0.99900001, and 1 − that in
  // float is 1.3e-5 off, which would scale every update by ~1 + 6.4e-6 against the bias correction.
  double one_minus_beta1 = 0, one_minus_beta2 = 0;
  double decay = 0;       // lr · weight_decay (decoupled decay p ← p − decay·p on matrices)
  double c1 = 1, c2 = 1;  // bias corrections 1/(1 − β1^t), 1/(1 − β2^t)
  double clip_norm = 0;   // > 0: gradients scaled by clip/(norm + 1e-6) when norm > clip
};

}  // namespace lenlab::ops
