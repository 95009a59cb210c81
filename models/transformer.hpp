#pragma once
// The decoder-only transformer: token (+ position) embedding, n_layer pre-LN blocks (multi-head
// causal self-attention, GELU MLP), a final layer norm on the EOS token, and a regression head
// (d → d, GELU, d → 1) giving one real number per sequence. Forward and backward by hand, on the
// CPU backend (models/cpu), for T = float (training) or double (gradient checks).
#include <cstdint>
#include <vector>

#include "models/config.hpp"
#include "models/cpu/eigen_maps.hpp"
#include "models/cpu/rope.hpp"
#include "models/parameters.hpp"
#include "tasks/batch.hpp"

namespace lenlab {

// What backward needs from forward, sized for the largest batch seen (vectors only grow).
// Per-layer tensors are stacked: layer l's block starts at l·(its per-layer size).
template <class T>
struct Activations {
  int n_tokens = 0, n_seq = 0;
  std::vector<size_t> att_offsets;           // [n_seq + 1] see models/cpu/attention.hpp
  cpu::Buffer<T> encoded;                    // [N, d] embedding output = layer 0's input
  cpu::Buffer<T> ln1, ln1_mean, ln1_rstd;    // [L, N, d], [L, N], [L, N]
  cpu::Buffer<T> qkv;                        // [L, N, 3d]
  cpu::Buffer<T> qkv_rope;                   // [L, N, 3d] q and k rotated (RoPE only)
  cpu::Buffer<T> att;                        // [L, att_offsets[n_seq]] softmax probabilities
  cpu::Buffer<T> atty;                       // [L, N, d] heads' outputs before the projection
  cpu::Buffer<T> resid_mid;                  // [L, N, d] x + attention
  cpu::Buffer<T> ln2, ln2_mean, ln2_rstd;    // [L, N, d], [L, N], [L, N]
  cpu::Buffer<T> fch, fch_gelu, fch_tanh;    // [L, N, d_ff] MLP pre-, post-activation, GELU's tanh
  cpu::Buffer<T> resid_out;                  // [L, N, d] layer output
  cpu::Buffer<T> last;                       // [S, d] the EOS token's residual after the last layer
  cpu::Buffer<T> lnf, lnf_mean, lnf_rstd;    // [S, d], [S], [S]
  cpu::Buffer<T> head_h, head_g, head_tanh;  // [S, d] head pre-, post-GELU, GELU's tanh
  cpu::Buffer<T> pred;                       // [S] the model's outputs
};

// Scratch gradients of activations for one layer at a time (reused across layers).
template <class T>
struct ActivationGrads {
  cpu::Buffer<T> dresid, dln, dqkv, dqkv_rope, datty, dfch, dfch_gelu;  // [N, ·]
  cpu::Buffer<T> dlast, dlnf, dhead_h, dhead_g;                         // [S, d]
};

template <class T>
class Transformer {
 public:
  // Validates the config (UsageError on bad sizes); parameters start at zero: call init().
  explicit Transformer(const ModelConfig& config);
  Transformer(const Transformer&) = delete;  // views point into our own buffers
  Transformer& operator=(const Transformer&) = delete;

  // GPT-2 initialisation: N(0, 0.02) weights, residual projections scaled by 1/√(2·n_layer),
  // the head N(0, 1/fan_in), zero biases, unit layer-norm gains. Deterministic in the seed.
  void init(uint64_t seed);

  const ModelConfig& config() const { return config_; }
  size_t num_parameters() const { return params_.size(); }
  cpu::Buffer<T>& params() { return params_; }
  const cpu::Buffer<T>& params() const { return params_; }
  cpu::Buffer<T>& grads() { return grads_; }
  const ParameterTensors<T>& weights() const { return w_; }
  const Activations<T>& activations() const { return act_; }

  // Predictions [n_seq], one per sequence; keeps the activations for backward().
  // Throws UsageError if a sequence is longer than a learned position table.
  const cpu::Buffer<T>& forward(const Batch& batch);

  void zero_grad();
  // dpred [n_seq] = dLoss/dprediction for the last forward batch. Adds into grads().
  void backward(const Batch& batch, const T* dpred);

 private:
  ModelConfig config_;
  cpu::Buffer<T> params_, grads_;
  ParameterTensors<T> w_, g_;
  cpu::Buffer<T> alibi_slopes_;  // [n_head] (ALiBi only)
  cpu::RopeTable<T> rope_;
  Activations<T> act_;
  ActivationGrads<T> grad_act_;
};

extern template class Transformer<float>;
extern template class Transformer<double>;

}  // namespace lenlab
