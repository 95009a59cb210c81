#pragma once
// K transformers of one shape (models/transformer.hpp) on the GPU, run as one batched computation
// over a model index: every operation is one launch for all K models (models/cuda/ops.hpp), so the
// card stays busy although each model is tiny. Each model gets its own packed batch; the forward
// and backward mirror Transformer<float>'s line by line.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/config.hpp"
#include "models/cpu/rope.hpp"
#include "models/cuda/device_buffer.hpp"
#include "models/parameters.hpp"
#include "tasks/batch.hpp"

namespace lenlab::cuda {

// K packed batches, one per model, in the device layout of ops.hpp: S sequence slots and N rows
// per model (the largest model's), shorter ones padded.
struct DeviceBatches {
  int n_models = 0;
  int rows = 0;         // N
  int seq_slots = 0;    // S
  int max_seq_len = 0;  // tokens, over all models
  size_t att_stride = 0;
  std::vector<int> n_seq;             // [K] real sequences per model (host)
  DeviceBuffer<int> tokens;           // [K, N]
  DeviceBuffer<int> offsets;          // [K, S + 1]
  DeviceBuffer<int64_t> att_offsets;  // [K, S + 1]
  DeviceBuffer<int> n_seq_device;     // [K]

  // Packs and uploads; batches[k] is model k's (it may hold no sequences).
  void upload(const std::vector<const Batch*>& batches, int n_head);
};

class TransformerBatch {
 public:
  // Throws UsageError on a bad config, CudaError when no GPU can be used. Parameters start at 0.
  TransformerBatch(const ModelConfig& config, int n_models);
  TransformerBatch(const TransformerBatch&) = delete;
  TransformerBatch& operator=(const TransformerBatch&) = delete;

  const ModelConfig& config() const { return config_; }
  int n_models() const { return n_models_; }
  size_t num_parameters() const { return n_params_; }  // per model: P
  float* params() { return params_.data(); }           // [K, P]
  float* grads() { return grads_.data(); }             // [K, P]

  void upload_parameters(int k, const float* host);  // host [P] → model k
  std::vector<float> download_parameters(int k) const;
  std::vector<float> download_gradients(int k) const;

  // Uploads one batch per model and runs the forward; keeps the activations for backward().
  // Throws UsageError if a sequence is longer than a learned position table.
  void forward(const std::vector<const Batch*>& batches);
  const DeviceBatches& batches() const { return batch_; }
  const float* predictions() const { return act_.pred.data(); }  // [K, S]
  std::vector<float> download_predictions() const;               // [K·S]

  void zero_grad();
  // dpred [K, S] device = dLoss/dprediction for the last forward. Adds into grads().
  void backward(const float* dpred);

 private:
  struct Activations {  // as Transformer<T>'s, with a leading model index [K, ...]
    DeviceBuffer<float> encoded, ln1, ln1_mean, ln1_rstd, qkv, qkv_rope, att, atty, resid_mid, ln2,
        ln2_mean, ln2_rstd, fch, fch_gelu, fch_tanh, resid_out, last, lnf, lnf_mean, lnf_rstd,
        head_h, head_g, head_tanh, pred;
  };
  struct ActivationGrads {
    DeviceBuffer<float> dresid, dln, dqkv, dqkv_rope, datty, dfch, dfch_gelu, dlast, dlnf, dhead_h,
        dhead_g, datt;
  };
  void reserve(int rows, int seq_slots, size_t att_stride);

  ModelConfig config_;
  int n_models_ = 0;
  size_t n_params_ = 0;
  DeviceBuffer<float> params_, grads_;
  ParameterTensors<float> w_, g_;  // model 0's views (device pointers); model k's are k·P further
  DeviceBuffer<float> alibi_slopes_;  // [n_head] (ALiBi only)
  cpu::RopeTable<float> rope_host_;
  DeviceBuffer<float> rope_cos_, rope_sin_;
  DeviceBatches batch_;
  Activations act_;
  ActivationGrads grad_;
};

}  // namespace lenlab::cuda
