#pragma once
// The decoder-only transformer, written once over a backend (models/cpu/backend.hpp): token
// (+ absolute position) embedding, n_layer pre-LN blocks (multi-head causal self-attention, GELU
// MLP), and heads on chosen rows (models/heads.hpp). Forward and backward by hand.
//
// K models of one shape run at once (the backend's model index, ops::Models): on the GPU this is
// how many tiny runs keep the card busy; on the CPU, K is usually 1 and runs go side by side on
// cores. Model<CpuBackend<double>> exists for gradient checks.
//
// Two forwards share the same block code (block_forward): the training forward keeps every
// activation the backward needs, the [L, L] attention probabilities included; the inference
// forward keeps nothing and computes attention a row at a time, so its memory is linear in the
// length. Both run the last block past attention (its output projection, MLP and residuals) only
// at the rows the heads read: no head reads the other rows, and they are most of the work.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/config.hpp"
#include "models/decode_cache.hpp"
#include "models/heads.hpp"
#include "models/ops/tables.hpp"
#include "models/packed_batch.hpp"
#include "models/parameters.hpp"
#include "models/position_bias.hpp"

namespace lenlab {

template <class B>
class Model {
 public:
  using T = typename B::Scalar;
  template <class U>
  using Buffer = typename B::template Buffer<U>;

  // Validates the config (UsageError on bad sizes); parameters start at zero: call init().
  explicit Model(const ModelConfig& config, int n_models = 1);
  Model(const Model&) = delete;  // views point into our own buffers
  Model& operator=(const Model&) = delete;

  // GPT-2 initialisation of model k: N(0, 0.02) weights, residual projections scaled by
  // 1/√(2·n_layer), the scalar head N(0, σ = 1/√fan_in), zero biases, unit layer-norm gains.
  // Drawn on the host in double, so every backend starts from the same weights.
  void init(int k, uint64_t seed);
  void init(uint64_t seed) { init(0, seed); }

  const ModelConfig& config() const { return config_; }
  int n_models() const { return K_; }
  size_t num_parameters() const { return P_; }  // per model
  ops::Models models() const { return {K_, P_}; }
  T* params() { return params_.data(); }  // [K, P] in the backend's memory
  const T* params() const { return params_.data(); }
  T* grads() { return grads_.data(); }  // [K, P]
  const T* grads() const { return grads_.data(); }
  const ParameterTensors<T>& weights() const { return w_; }  // model 0's views
  std::vector<T> parameters(int k) const;                    // model k's, on the host
  std::vector<T> gradients(int k) const;
  void set_parameters(int k, const T* host);  // [P]
  void zero_grad();

  // The last forward's head outputs, in the backend's memory.
  const T* scalar_out() const { return scalar_out_.data(); }             // [K, R]
  const T* token_logits() const { return token_out_.data(); }            // [K, R', V]
  std::vector<T> download_scalar_out(const PackedBatch<B>& in) const;    // [K·R]
  std::vector<T> download_token_logits(const PackedBatch<B>& in) const;  // [K·R'·V]

  // Training forward: keeps the activations for backward(). It first uploads the tables the batch
  // needs (prepare()).
  void forward(const PackedBatch<B>& in);
  // The positional tables a batch needs (a fixed absolute table, RoPE's angles, a bias table),
  // uploaded when they grow or change: forward() calls it first; a caller capturing forward() as a
  // CUDA graph calls it before the capture, which may not copy from the host (forward()'s own
  // call then has nothing to upload).
  void prepare(const PackedBatch<B>& in);
  // Whether a training step is device work alone: false when a learned positional bias's tables
  // are rebuilt on the host every step (and its gradients chained back there).
  bool step_is_device_only() const { return !learned_bias(); }
  // The sizes of the tables prepare() last left (they only grow, and a step's launches read
  // them): with PackedBatch::shape_key, the key of a step replayed as a CUDA graph.
  std::vector<int64_t> table_sizes() const {
    return {position_rows_, rope_host_.positions, rope_in_attention_, bias_rows_, bias_cols_};
  }
  // dscalar [K, R] and dlogits [K, R', V]: dLoss/d(head outputs) of the last forward (null for a
  // head the batch does not read). Adds into grads().
  void backward(const PackedBatch<B>& in, const T* dscalar, const T* dlogits);
  // Inference forward: the same outputs, nothing kept, the last block at the read rows only.
  void infer(const PackedBatch<B>& in);
  // With on, infer() also keeps each layer's attention statistics: per query row and head the
  // entropy (nats) and the largest probability (AttentionArgs::row_stats).
  void keep_attention_stats(bool on) { keep_stats_ = on; }
  // Layer l's statistics of the last infer() with them kept: [K, Q_l, n_head, 2], Q_l = N rows
  // below the last layer, the read rows (n_query()) in it.
  std::vector<T> download_attention_stats(const PackedBatch<B>& in, int l) const;
  // Layer l's softmax probabilities of the last forward() (the training forward keeps them):
  // [K · in.prob_stride], sequence s of model k at k·prob_stride + prob_offsets[k, s], laid out
  // [n_head, L, L] (row i, key j; 0 above the diagonal, outside a window and at rows the forward
  // skipped). For diagnostics (train/attention_probe.hpp).
  std::vector<T> download_attention_probabilities(const PackedBatch<B>& in, int l) const;
  // Layer l's attention output (the heads' weighted values, before W_o) of the last forward():
  // [K, N, d], row r of model k at (k·N + r)·d. The last layer holds only the rows its heads read
  // (n_query(): packed.query_rows); its other rows are unspecified. For diagnostics
  // (train/representation_stats.hpp).
  std::vector<T> download_attention_output(const PackedBatch<B>& in, int l) const;

  // Incremental decoding (models/model_decode.hpp): the same blocks, each new token's keys and
  // values appended to a cache and its query attending over it, so a token costs one query per
  // layer, not a forward over its prefix. begin_decode: an empty cache (DecodeSetup says for how
  // many sequences of how many tokens, attending how). A setting that depends on a batch's length
  // (dynamic RoPE) is the full forward's for a batch whose largest position is max_position; a
  // temperature by length is per sequence (DecodeSetup::lengths).
  DecodeCache<B> begin_decode(const DecodeSetup& setup);
  // n_seq sequences of up to `capacity` tokens at positions 0, 1, …, every model attending by
  // `attention`.
  DecodeCache<B> begin_decode(int n_seq, int capacity, const AttentionSpec& attention = {},
                              const std::vector<int>& lengths = {}) {
    std::vector<const AttentionSpec*> specs(K_, &attention);
    return begin_decode(DecodeSetup{n_seq, capacity, -1, specs, lengths});
  }
  // Appends tokens[k·n_seq + s] to sequence s of model k (any number, none included), at
  // positions[k·n_seq + s] when given (non-decreasing, at most the setup's max_position), else
  // each one past its sequence's last; returns the token head's logits: with every_row, at every
  // appended row, [K, R, V] with model k's rows sequence by sequence and R the most rows a model
  // appended (padding 0); else at each sequence's last appended row, [K, n_seq, V] (0 for a
  // sequence given none). Throws UsageError, and appends nothing, for a token outside the
  // vocabulary, a position out of order or range, or a sequence past the cache's capacity. A
  // learned bias's tables are built from the parameters when a cache first decodes (and after any
  // other forward): begin a new cache after changing the parameters.
  std::vector<T> decode(DecodeCache<B>& cache, const std::vector<std::vector<int>>& tokens,
                        bool every_row = false,
                        const std::vector<std::vector<int>>* positions = nullptr);

 private:
  // How a training pass lays out one batch's activations: N rows, Q = n_query() read rows; each
  // layer's slot holds max(N, Q) rows (N below the last layer, Q in the last one past its
  // attention, more than N when both heads read the same rows).
  struct TrainLayout {
    int N = 0, Q = 0;
    size_t Nd = 0, Nf = 0, N1 = 0;  // a layer's slot: [K, rows, d], [K, rows, d_ff], [K, rows]
    size_t att_size = 0;            // a layer's attention probabilities, [K·prob_stride]
  };
  TrainLayout train_layout(const PackedBatch<B>& in) const;
  // A learned positional bias's tables: their gradients [K, n_head, rows, cols] per table.
  bool learned_bias() const { return bias_ && bias_->learned(); }
  size_t bias_per_table() const {
    return learned_bias() ? static_cast<size_t>(K_) * config_.n_head * bias_rows_ * bias_cols_ : 0;
  }
  // RoPE rotates q and k before attention (else attention rotates by distance: a distance cap).
  bool rotary() const { return encoding_->rotary; }
  bool rope_first() const { return rotary() && !rope_in_attention_; }
  // The absolute table added to the token embedding (null: none) and the elements between two
  // models' tables: a learned one in each model's parameters, a fixed one shared.
  const T* absolute_table() const {
    return encoding_->absolute == AbsoluteTable::kFixed ? position_table_.data() : w_.wpe;
  }
  size_t absolute_stride() const { return encoding_->absolute == AbsoluteTable::kLearned ? P_ : 0; }
  // What the token embedding is multiplied by (ModelConfig::embedding_scale), in T.
  T token_scale() const { return static_cast<T>(config_.embedding_scale); }

  // What the training forward keeps; per-layer tensors stacked, layer l's block at l·(its size).
  // The last layer's entries hold Q = n_query() rows from attention's output on (atty, mid, ln2,
  // fch, out); a layer's slot has max(N, Q) rows.
  struct Activations {
    Buffer<T> encoded;                  // [K, N, d] embedding output = layer 0's input
    Buffer<T> embedded;                 // [K, N, d] before VCL's random prefix (with one only)
    Buffer<T> ln1, ln1_mean, ln1_rstd;  // [L, K, N, d], [L, K, N], [L, K, N]
    Buffer<T> qkv, qkv_rope;            // [L, K, N, 3d] (rotated copy: RoPE only)
    Buffer<T> att;                      // [L, K·prob_stride] softmax probabilities
    Buffer<T> atty, resid_mid;          // [L, K, N, d]
    Buffer<T> ln2, ln2_mean, ln2_rstd;  // [L, K, N, d], [L, K, N], [L, K, N]
    Buffer<T> fch, fch_gelu, fch_tanh;  // [L, K, N, d_ff]
    Buffer<T> resid_out;                // [L, K, N, d] layer outputs
    Buffer<T> x_q;                      // [K, Q, d] the last layer's input at the read rows
    Buffer<T> atty_all;                 // [K, N, d] the last attention's output at every row
  };
  // Gradients of activations, one layer at a time (reused across layers).
  struct ActivationGrads {
    Buffer<T> dresid, dln, datty, dqkv, dqkv_rope, dfch, dfch_gelu;  // [K, max(N, Q), ·]
    Buffer<T> dresid_q, datty_q;  // [K, Q, d] the last layer's, at the read rows
    Buffer<T> dembedded;          // [K, N, d] before VCL's random prefix (with one only)
    Buffer<T> scratch;            // [K·prob_stride] the CUDA attention backward's workspace
  };
  // The inference forward's scratch, one layer's worth, reused by every layer.
  struct InferScratch {
    Buffer<T> x0, x1;                                   // [K, N, d] residual, ping-pong
    Buffer<T> ln1, qkv, qkv_rope, x_q, atty, mid, ln2;  // [K, N, ·]
    Buffer<T> fch, fch_gelu;                            // [K, N, d_ff]
  };
  // One block's tensors: where block_forward reads and writes.
  struct BlockTensors {
    const T* x = nullptr;             // [K, N, d] the block's input (keys and values: every row)
    const T* x_q = nullptr;           // [K, Q, d] its rows at the queries (x when Q = N)
    const int* query_rows = nullptr;  // [K, Q] the rows past attention; null: every row
    int Q = 0;
    T *ln1, *ln1_mean, *ln1_rstd, *qkv, *qkv_rope, *att, *atty, *mid, *ln2, *ln2_mean, *ln2_rstd,
        *fch, *fch_gelu, *fch_tanh, *out;  // means, rstds, tanh and att null in inference
    T* atty_all = nullptr;   // [K, N, d] training with query rows: attention at every row
    T* row_stats = nullptr;  // inference: [K, Q, n_head, 2] attention statistics, or null
  };
  // A block's tensors in the inference scratch (infer_), writing its output to `out`; the
  // caller sets x, x_q, Q, query_rows and row_stats.
  BlockTensors infer_block_tensors(T* out);
  // decode()'s work: one step whose tokens fit their slots (at[i]: their positions), and a full
  // slot's window moved down to follow its first n_global rows (full: k·n_seq + s).
  std::vector<T> decode_rows(DecodeCache<B>& cache, const std::vector<std::vector<int>>& tokens,
                             const std::vector<std::vector<int>>& at, bool every_row);
  void move_window_down(DecodeCache<B>& cache, const std::vector<int>& full);
  // Grows infer_ for blocks of up to `rows` rows per model, [q|k|v] (and its rotated copy) of
  // `key_rows`.
  void reserve_infer(size_t rows, size_t key_rows);
  // The tables a forward over positions 0..max_position attending by `attention` reads: a fixed
  // absolute table's rows, RoPE's angles, the bias tables (a learned bias's from the parameters as
  // they are now).
  void prepare_tables(int max_position, const AttentionSpec& attention);
  // Layer l's attention settings for the batch (its bias table among them).
  ops::AttentionArgs<T> attention_args(const PackedBatch<B>& in, int l) const {
    return attention_args(in.attention, in.scaled ? in.seq_scale.data() : nullptr, l);
  }
  // The same for sequences attending by `attention` with logit multipliers seq_scale [K, S]
  // (null: 1).
  ops::AttentionArgs<T> attention_args(const AttentionSpec& attention, const T* seq_scale,
                                       int l) const;
  // The bias tables for distances 0..cols−1: fixed ones once per size, learned ones from the
  // parameters before every forward.
  void update_bias_tables(int rows, int cols);
  // The learned bias's dLoss/db tables → its parameters' gradients (added into grads()).
  void chain_bias_gradients();
  void block_forward(int l, const BlockTensors& t, const PackedBatch<B>& in, bool train);
  // The block past attention, at t.Q rows: t.atty (attention's output) → t.out.
  void block_after_attention(int l, const BlockTensors& t);
  // Layer l's backward, from the activations the training forward kept: grad_act_.dresid (or, in
  // the last layer, dresid_q) holds dLoss/d(layer output) and becomes dLoss/d(layer input).
  void block_backward(int l, const PackedBatch<B>& in);
  void heads_forward(const T* x_q, const PackedBatch<B>& in, bool keep);

  ModelConfig config_;
  int K_ = 1;
  size_t P_ = 0;
  Buffer<T> params_, grads_;
  ParameterTensors<T> w_, g_;
  // What the encoding computes (models/encodings/): the hooks below.
  const EncodingMath* encoding_ = nullptr;
  // A fixed absolute table's rows 0..position_rows_−1 [position_rows_, d] (AbsoluteTable::kFixed).
  Buffer<T> position_table_;
  int position_rows_ = 0;
  // The encoding's additive bias on the logits (models/position_bias.hpp), or null.
  std::unique_ptr<PositionBias> bias_;
  size_t pe_offset_ = 0;    // its parameters' block within a model's P (learned biases)
  Buffer<T> bias_tables_;   // [n_tables, K (learned) or 1 (fixed), n_head, rows, cols]
  Buffer<T> dbias_tables_;  // [n_tables, K, n_head, rows, cols] the backward's dLoss/db
  int bias_rows_ = 1;       // query positions the tables cover (FIRE), else 1
  int bias_cols_ = 0;       // distances the tables cover
  ops::RopeTable<T> rope_host_;
  Buffer<T> rope_cos_, rope_sin_;   // rope_host_'s, in the backend's memory
  bool rope_in_attention_ = false;  // this forward: RoPE by relative distance (a distance cap)
  Activations act_;
  ActivationGrads grad_act_;
  InferScratch infer_;
  bool keep_stats_ = false;
  // Counts prepare_tables() calls: a decode cache re-prepares the tables only when another
  // forward has prepared them since (DecodeCache::tables_version).
  uint64_t tables_version_ = 1;  // a cache starts at 0: it prepares on its first step
  Buffer<T> attention_stats_;    // [L][K, max(N, Q), n_head, 2], layer l's block at l·(its size)
  Head<B> scalar_head_{HeadKind::kScalar}, token_head_{HeadKind::kToken};
  Buffer<T> scalar_out_, token_out_;
};

template <class T>
struct CpuBackend;
// The CPU model: float for training, double for gradient checks.
template <class T>
using Transformer = Model<CpuBackend<T>>;

}  // namespace lenlab
