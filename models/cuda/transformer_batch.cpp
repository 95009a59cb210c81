#include "models/cuda/transformer_batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "models/cpu/attention.hpp"
#include "models/cuda/ops.hpp"

namespace lenlab::cuda {

void DeviceBatches::upload(const std::vector<const Batch*>& batches, int n_head) {
  n_models = static_cast<int>(batches.size());
  rows = 0;
  seq_slots = 0;
  max_seq_len = 0;
  n_seq.assign(n_models, 0);
  for (int k = 0; k < n_models; ++k) {
    const Batch& b = *batches[k];
    n_seq[k] = b.n_seq();
    rows = std::max(rows, b.n_tokens());
    seq_slots = std::max(seq_slots, b.n_seq());
    max_seq_len = std::max(max_seq_len, b.max_seq_len());
  }
  const size_t K = n_models, N = rows, S1 = seq_slots + 1;
  std::vector<int> tok(K * N, kZero), off(K * S1, 0);
  std::vector<int64_t> att(K * S1, 0);
  att_stride = 0;
  for (size_t k = 0; k < K; ++k) {
    const Batch& b = *batches[k];
    std::copy(b.tokens.begin(), b.tokens.end(), tok.begin() + k * N);
    const int n = b.n_seq();
    const std::vector<size_t> a =
        n > 0 ? cpu::attention_offsets(b.offsets.data(), n, n_head) : std::vector<size_t>{0};
    for (size_t s = 0; s < S1; ++s) {  // empty slots repeat the model's last offset
      const size_t src = std::min<size_t>(s, n);
      off[k * S1 + s] = n > 0 ? b.offsets[src] : 0;
      att[k * S1 + s] = static_cast<int64_t>(a[src]);
    }
    att_stride = std::max(att_stride, a.back());
  }
  tokens.upload(tok);
  offsets.upload(off);
  att_offsets.upload(att);
  n_seq_device.upload(n_seq);
}

TransformerBatch::TransformerBatch(const ModelConfig& config, int n_models)
    : config_(config), n_models_(n_models) {
  config_.validate();
  if (n_models < 1) throw std::invalid_argument("TransformerBatch: n_models must be >= 1");
  n_params_ = parameter_count(config_);
  params_.reserve_at_least(n_params_ * n_models_);
  grads_.reserve_at_least(n_params_ * n_models_);
  params_.zero();
  grads_.zero();
  w_ = bind_parameters(config_, params_.data());
  g_ = bind_parameters(config_, grads_.data());
  if (config_.pe == PositionalEncoding::kAlibi) {
    std::vector<float> slopes;
    for (double s : cpu::alibi_slopes(config_.n_head)) slopes.push_back(static_cast<float>(s));
    alibi_slopes_.upload(slopes);
  }
}

void TransformerBatch::upload_parameters(int k, const float* host) {
  LENLAB_CUDA_CHECK(cudaMemcpy(params_.data() + static_cast<size_t>(k) * n_params_, host,
                               n_params_ * sizeof(float), cudaMemcpyHostToDevice));
}

namespace {
std::vector<float> download_model(const DeviceBuffer<float>& all, int k, size_t n) {
  std::vector<float> host(n);
  LENLAB_CUDA_CHECK(cudaMemcpy(host.data(), all.data() + static_cast<size_t>(k) * n,
                               n * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}
}  // namespace

std::vector<float> TransformerBatch::download_parameters(int k) const {
  return download_model(params_, k, n_params_);
}

std::vector<float> TransformerBatch::download_gradients(int k) const {
  return download_model(grads_, k, n_params_);
}

std::vector<float> TransformerBatch::download_predictions() const {
  return act_.pred.download(static_cast<size_t>(n_models_) * batch_.seq_slots);
}

void TransformerBatch::zero_grad() {
  grads_.zero();
}

void TransformerBatch::reserve(int rows, int seq_slots, size_t att_stride) {
  const ModelConfig& c = config_;
  const size_t K = n_models_, L = c.n_layer, N = rows, S = seq_slots, d = c.d_model, f = c.d_ff;
  Activations& a = act_;
  a.encoded.reserve_at_least(K * N * d);
  for (auto* v : {&a.ln1, &a.atty, &a.resid_mid, &a.ln2, &a.resid_out})
    v->reserve_at_least(L * K * N * d);
  for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd})
    v->reserve_at_least(L * K * N);
  a.qkv.reserve_at_least(L * K * N * 3 * d);
  if (c.pe == PositionalEncoding::kRope) a.qkv_rope.reserve_at_least(L * K * N * 3 * d);
  a.att.reserve_at_least(std::max<size_t>(1, L * K * att_stride));
  for (auto* v : {&a.fch, &a.fch_gelu, &a.fch_tanh}) v->reserve_at_least(L * K * N * f);
  for (auto* v : {&a.last, &a.lnf, &a.head_h, &a.head_g, &a.head_tanh})
    v->reserve_at_least(K * S * d);
  for (auto* v : {&a.lnf_mean, &a.lnf_rstd, &a.pred}) v->reserve_at_least(K * S);
}

void TransformerBatch::forward(const std::vector<const Batch*>& batches) {
  const ModelConfig& c = config_;
  if (static_cast<int>(batches.size()) != n_models_)
    throw std::invalid_argument(fmt::format("TransformerBatch::forward: {} batches for {} models",
                                            batches.size(), n_models_));
  int max_len = 0;
  for (const Batch* b : batches) max_len = std::max(max_len, b->max_seq_len());
  if (c.pe == PositionalEncoding::kLearned && max_len > c.max_positions)
    throw UsageError(fmt::format(
        "a sequence of {} tokens (length {} plus BOS and EOS) is longer than the learned position "
        "table ({} rows, trained for lengths up to {}); learned positions cannot be evaluated past "
        "their table: train with a larger --l-test, or use another --pe",
        max_len, max_len - 2, c.max_positions, c.max_positions - 2));
  batch_.upload(batches, c.n_head);
  if (c.pe == PositionalEncoding::kRope && max_len > rope_host_.positions) {
    rope_host_.ensure(max_len, c.head_dim(), c.rope_base);
    rope_cos_.upload(rope_host_.cos);
    rope_sin_.upload(rope_host_.sin);
  }
  const int N = batch_.rows, S = batch_.seq_slots, d = c.d_model, f = c.d_ff, H = c.n_head;
  reserve(N, S, batch_.att_stride);
  const Models m{n_models_, n_params_};
  const SeqLayout lay{N, batch_.att_stride};
  const size_t K = n_models_, Nd = K * N * d, Nf = K * N * f, N1 = K * N;
  const size_t att_size = K * batch_.att_stride;
  const int* off = batch_.offsets.data();
  const int64_t* att_off = batch_.att_offsets.data();
  AttentionOptions att_opt;
  att_opt.alibi_slopes = c.pe == PositionalEncoding::kAlibi ? alibi_slopes_.data() : nullptr;
  Activations& a = act_;

  embedding_forward(a.encoded.data(), batch_.tokens.data(), off, S, w_.wte, w_.wpe, d, lay, m);
  const float* x = a.encoded.data();
  for (int l = 0; l < c.n_layer; ++l) {
    const auto& L = w_.layers[l];
    float* ln1 = a.ln1.data() + l * Nd;
    float* qkv = a.qkv.data() + l * 3 * Nd;
    float* att = a.att.data() + l * att_size;
    float* atty = a.atty.data() + l * Nd;
    float* mid = a.resid_mid.data() + l * Nd;
    float* ln2 = a.ln2.data() + l * Nd;
    float* fch = a.fch.data() + l * Nf;
    float* fch_gelu = a.fch_gelu.data() + l * Nf;
    float* out = a.resid_out.data() + l * Nd;

    layernorm_forward(ln1, a.ln1_mean.data() + l * N1, a.ln1_rstd.data() + l * N1, x, L.ln1_g,
                      L.ln1_b, N, d, m);
    linear_forward(qkv, ln1, L.w_qkv, L.b_qkv, N, d, 3 * d, m);
    const float* qkv_att = qkv;
    if (c.pe == PositionalEncoding::kRope) {
      float* rot = a.qkv_rope.data() + l * 3 * Nd;
      rope_forward(rot, qkv, off, S, d, H, rope_cos_.data(), rope_sin_.data(), lay, m);
      qkv_att = rot;
    }
    attention_forward(atty, att, qkv_att, off, att_off, S, d, H, att_opt, lay, m);
    linear_forward(mid, atty, L.w_o, L.b_o, N, d, d, m);
    add_inplace(mid, x, Nd);  // residual
    layernorm_forward(ln2, a.ln2_mean.data() + l * N1, a.ln2_rstd.data() + l * N1, mid, L.ln2_g,
                      L.ln2_b, N, d, m);
    linear_forward(fch, ln2, L.w_fc, L.b_fc, N, d, f, m);
    gelu_forward(fch_gelu, a.fch_tanh.data() + l * Nf, fch, Nf);
    linear_forward(out, fch_gelu, L.w_proj, L.b_proj, N, f, d, m);
    add_inplace(out, mid, Nd);  // residual
    x = out;
  }
  // Only the EOS token feeds the head, so the final layer norm runs on those rows alone.
  const size_t Sd = K * S * d;
  gather_last_forward(a.last.data(), x, off, S, d, lay, m);
  layernorm_forward(a.lnf.data(), a.lnf_mean.data(), a.lnf_rstd.data(), a.last.data(), w_.lnf_g,
                    w_.lnf_b, S, d, m);
  linear_forward(a.head_h.data(), a.lnf.data(), w_.head_w1, w_.head_b1, S, d, d, m);
  gelu_forward(a.head_g.data(), a.head_tanh.data(), a.head_h.data(), Sd);
  linear_forward(a.pred.data(), a.head_g.data(), w_.head_w2, w_.head_b2, S, d, 1, m);
}

void TransformerBatch::backward(const float* dpred) {
  const ModelConfig& c = config_;
  const int N = batch_.rows, S = batch_.seq_slots, d = c.d_model, f = c.d_ff, H = c.n_head;
  const size_t K = n_models_, Nd = K * N * d, Nf = K * N * f, N1 = K * N, Sd = K * S * d;
  const size_t att_size = K * batch_.att_stride;
  const Models m{n_models_, n_params_};
  const SeqLayout lay{N, batch_.att_stride};
  const int* off = batch_.offsets.data();
  const int64_t* att_off = batch_.att_offsets.data();
  const Activations& a = act_;
  ActivationGrads& g = grad_;
  for (auto* v : {&g.dresid, &g.dln, &g.datty}) v->reserve_at_least(Nd);
  g.dqkv.reserve_at_least(3 * Nd);
  if (c.pe == PositionalEncoding::kRope) g.dqkv_rope.reserve_at_least(3 * Nd);
  g.dfch.reserve_at_least(Nf);
  g.dfch_gelu.reserve_at_least(Nf);
  for (auto* v : {&g.dlast, &g.dlnf, &g.dhead_h, &g.dhead_g}) v->reserve_at_least(Sd);
  g.datt.reserve_at_least(std::max<size_t>(1, att_size));
  auto zero = [](DeviceBuffer<float>& v, size_t n) {
    if (n) LENLAB_CUDA_CHECK(cudaMemsetAsync(v.data(), 0, n * sizeof(float)));
  };
  AttentionOptions att_opt;
  att_opt.alibi_slopes = c.pe == PositionalEncoding::kAlibi ? alibi_slopes_.data() : nullptr;

  // pred = head_g·w2 + b2
  zero(g.dhead_g, Sd);
  linear_backward(g.dhead_g.data(), g_.head_w2, g_.head_b2, dpred, a.head_g.data(), w_.head_w2, S,
                  d, 1, m);
  // head_g = gelu(head_h)
  zero(g.dhead_h, Sd);
  gelu_backward(g.dhead_h.data(), a.head_h.data(), a.head_tanh.data(), g.dhead_g.data(), Sd);
  // head_h = lnf·W1 + b1
  zero(g.dlnf, Sd);
  linear_backward(g.dlnf.data(), g_.head_w1, g_.head_b1, g.dhead_h.data(), a.lnf.data(), w_.head_w1,
                  S, d, d, m);
  // lnf = layernorm(last)
  zero(g.dlast, Sd);
  layernorm_backward(g.dlast.data(), g_.lnf_g, g_.lnf_b, g.dlnf.data(), a.last.data(), w_.lnf_g,
                     a.lnf_mean.data(), a.lnf_rstd.data(), S, d, m);
  // last = the EOS rows of the final residual stream
  zero(g.dresid, Nd);
  gather_last_backward(g.dresid.data(), g.dlast.data(), off, S, d, lay, m);

  // dresid holds dLoss/d(layer output); each sub-layer's backward adds its contribution into it.
  for (int l = c.n_layer - 1; l >= 0; --l) {
    const auto& L = w_.layers[l];
    auto& G = g_.layers[l];
    const float* x = l == 0 ? a.encoded.data() : a.resid_out.data() + (l - 1) * Nd;
    const float* ln1 = a.ln1.data() + l * Nd;
    const float* qkv = a.qkv.data() + l * 3 * Nd;
    const float* att = a.att.data() + l * att_size;
    const float* atty = a.atty.data() + l * Nd;
    const float* mid = a.resid_mid.data() + l * Nd;
    const float* ln2 = a.ln2.data() + l * Nd;
    const float* fch = a.fch.data() + l * Nf;
    const float* fch_gelu = a.fch_gelu.data() + l * Nf;

    // out = mid + fch_gelu·Wp + bp
    zero(g.dfch_gelu, Nf);
    linear_backward(g.dfch_gelu.data(), G.w_proj, G.b_proj, g.dresid.data(), fch_gelu, L.w_proj, N,
                    f, d, m);
    // fch_gelu = gelu(fch)
    zero(g.dfch, Nf);
    gelu_backward(g.dfch.data(), fch, a.fch_tanh.data() + l * Nf, g.dfch_gelu.data(), Nf);
    // fch = ln2·Wfc + bfc
    zero(g.dln, Nd);
    linear_backward(g.dln.data(), G.w_fc, G.b_fc, g.dfch.data(), ln2, L.w_fc, N, d, f, m);
    // ln2 = layernorm(mid): dresid becomes dLoss/dmid
    layernorm_backward(g.dresid.data(), G.ln2_g, G.ln2_b, g.dln.data(), mid, L.ln2_g,
                       a.ln2_mean.data() + l * N1, a.ln2_rstd.data() + l * N1, N, d, m);
    // mid = x + atty·Wo + bo
    zero(g.datty, Nd);
    linear_backward(g.datty.data(), G.w_o, G.b_o, g.dresid.data(), atty, L.w_o, N, d, d, m);
    // atty = attention(qkv, rotated by RoPE when used)
    zero(g.dqkv, 3 * Nd);
    if (c.pe == PositionalEncoding::kRope) {
      zero(g.dqkv_rope, 3 * Nd);
      attention_backward(g.dqkv_rope.data(), g.datty.data(), a.qkv_rope.data() + l * 3 * Nd, att,
                         off, att_off, S, d, H, att_opt, g.datt.data(), lay, m);
      rope_backward(g.dqkv.data(), g.dqkv_rope.data(), off, S, d, H, rope_cos_.data(),
                    rope_sin_.data(), lay, m);
    } else {
      attention_backward(g.dqkv.data(), g.datty.data(), qkv, att, off, att_off, S, d, H, att_opt,
                         g.datt.data(), lay, m);
    }
    // qkv = ln1·Wqkv + bqkv
    zero(g.dln, Nd);
    linear_backward(g.dln.data(), G.w_qkv, G.b_qkv, g.dqkv.data(), ln1, L.w_qkv, N, d, 3 * d, m);
    // ln1 = layernorm(x): dresid becomes dLoss/dx
    layernorm_backward(g.dresid.data(), G.ln1_g, G.ln1_b, g.dln.data(), x, L.ln1_g,
                       a.ln1_mean.data() + l * N1, a.ln1_rstd.data() + l * N1, N, d, m);
  }
  // encoded = wte[token] + wpe[position]
  embedding_backward(g_.wte, g_.wpe, g.dresid.data(), batch_.tokens.data(), off, S, d, lay, m);
}

}  // namespace lenlab::cuda
