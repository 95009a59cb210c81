#include "models/transformer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/cpu/attention.hpp"
#include "models/cpu/embedding.hpp"
#include "models/cpu/gelu.hpp"
#include "models/cpu/layernorm.hpp"
#include "models/cpu/linear.hpp"

namespace lenlab {

template <class T>
Transformer<T>::Transformer(const ModelConfig& config) : config_(config) {
  config_.validate();
  const size_t n = parameter_count(config_);
  params_.assign(n, T(0));
  grads_.assign(n, T(0));
  w_ = bind_parameters(config_, params_.data());
  g_ = bind_parameters(config_, grads_.data());
  if (config_.pe == PositionalEncoding::kAlibi)
    for (double s : cpu::alibi_slopes(config_.n_head)) alibi_slopes_.push_back(static_cast<T>(s));
}

template <class T>
void Transformer<T>::init(uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.n_layer);
  for (const TensorInfo& t : parameter_layout(config_)) {
    T* p = params_.data() + t.offset;
    const double fan_in_std = 1.0 / std::sqrt(static_cast<double>(t.shape[0]));
    for (size_t i = 0; i < t.size; ++i) {
      switch (t.init) {
        case InitKind::kOne:
          p[i] = T(1);
          break;
        case InitKind::kZero:
          p[i] = T(0);
          break;
        case InitKind::kNormal002:
          p[i] = static_cast<T>(0.02 * rng.normal());
          break;
        case InitKind::kNormalResidual:
          p[i] = static_cast<T>(residual_std * rng.normal());
          break;
        case InitKind::kFanIn:
          p[i] = static_cast<T>(fan_in_std * rng.normal());
          break;
      }
    }
  }
}

template <class T>
void Transformer<T>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

namespace {
template <class V>
void grow(V& v, size_t n) {
  if (v.size() < n) v.resize(n);
}
template <class V>
void zero(V& v, size_t n) {
  std::fill_n(v.begin(), n, typename V::value_type(0));
}
}  // namespace

template <class T>
const cpu::Buffer<T>& Transformer<T>::forward(const Batch& batch) {
  const ModelConfig& c = config_;
  const int N = batch.n_tokens(), S = batch.n_seq(), d = c.d_model, f = c.d_ff, H = c.n_head;
  const int* off = batch.offsets.data();
  const int max_len = batch.max_seq_len();
  if (c.pe == PositionalEncoding::kLearned && max_len > c.max_positions)
    throw UsageError(fmt::format(
        "a sequence of {} tokens (length {} plus BOS and EOS) is longer than the learned position "
        "table ({} rows, trained for lengths up to {}); learned positions cannot be evaluated past "
        "their table: train with a larger --l-test, or use another --pe",
        max_len, max_len - 2, c.max_positions, c.max_positions - 2));
  if (c.pe == PositionalEncoding::kRope) rope_.ensure(max_len, c.head_dim(), c.rope_base);

  Activations<T>& a = act_;
  a.n_tokens = N;
  a.n_seq = S;
  a.att_offsets = cpu::attention_offsets(off, S, H);
  const size_t Nd = static_cast<size_t>(N) * d, Nf = static_cast<size_t>(N) * f;
  const size_t att_size = a.att_offsets[S], Lc = static_cast<size_t>(c.n_layer);
  grow(a.encoded, Nd);
  for (auto* v : {&a.ln1, &a.atty, &a.resid_mid, &a.ln2, &a.resid_out}) grow(*v, Lc * Nd);
  for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) grow(*v, Lc * N);
  grow(a.qkv, Lc * 3 * Nd);
  if (c.pe == PositionalEncoding::kRope) grow(a.qkv_rope, Lc * 3 * Nd);
  grow(a.att, Lc * att_size);
  grow(a.fch, Lc * Nf);
  grow(a.fch_gelu, Lc * Nf);
  grow(a.fch_tanh, Lc * Nf);
  for (auto* v : {&a.last, &a.lnf, &a.head_h, &a.head_g, &a.head_tanh})
    grow(*v, static_cast<size_t>(S) * d);
  for (auto* v : {&a.lnf_mean, &a.lnf_rstd}) grow(*v, S);
  a.pred.resize(S);

  cpu::AttentionOptions<T> att_opt;
  att_opt.alibi_slopes = alibi_slopes_.empty() ? nullptr : alibi_slopes_.data();

  cpu::embedding_forward(a.encoded.data(), batch.tokens.data(), off, S, w_.wte, w_.wpe, d);
  const T* x = a.encoded.data();
  for (int l = 0; l < c.n_layer; ++l) {
    const auto& L = w_.layers[l];
    T* ln1 = a.ln1.data() + l * Nd;
    T* qkv = a.qkv.data() + l * 3 * Nd;
    T* att = a.att.data() + l * att_size;
    T* atty = a.atty.data() + l * Nd;
    T* mid = a.resid_mid.data() + l * Nd;
    T* ln2 = a.ln2.data() + l * Nd;
    T* fch = a.fch.data() + l * Nf;
    T* fch_gelu = a.fch_gelu.data() + l * Nf;
    T* out = a.resid_out.data() + l * Nd;

    cpu::layernorm_forward(ln1, a.ln1_mean.data() + l * N, a.ln1_rstd.data() + l * N, x, L.ln1_g,
                           L.ln1_b, N, d);
    cpu::linear_forward(qkv, ln1, L.w_qkv, L.b_qkv, N, d, 3 * d);
    const T* qkv_att = qkv;
    if (c.pe == PositionalEncoding::kRope) {
      T* rot = a.qkv_rope.data() + l * 3 * Nd;
      cpu::rope_forward(rot, qkv, off, S, d, H, rope_);
      qkv_att = rot;
    }
    cpu::attention_forward(atty, att, qkv_att, off, a.att_offsets, S, d, H, att_opt);
    cpu::linear_forward(mid, atty, L.w_o, L.b_o, N, d, d);
    for (size_t i = 0; i < Nd; ++i) mid[i] += x[i];  // residual
    cpu::layernorm_forward(ln2, a.ln2_mean.data() + l * N, a.ln2_rstd.data() + l * N, mid, L.ln2_g,
                           L.ln2_b, N, d);
    cpu::linear_forward(fch, ln2, L.w_fc, L.b_fc, N, d, f);
    cpu::gelu_forward(fch_gelu, a.fch_tanh.data() + l * Nf, fch, Nf);
    cpu::linear_forward(out, fch_gelu, L.w_proj, L.b_proj, N, f, d);
    for (size_t i = 0; i < Nd; ++i) out[i] += mid[i];  // residual
    x = out;
  }
  // Only the EOS token feeds the head, so the final layer norm runs on those rows alone.
  cpu::gather_last_forward(a.last.data(), x, off, S, d);
  cpu::layernorm_forward(a.lnf.data(), a.lnf_mean.data(), a.lnf_rstd.data(), a.last.data(),
                         w_.lnf_g, w_.lnf_b, S, d);
  cpu::linear_forward(a.head_h.data(), a.lnf.data(), w_.head_w1, w_.head_b1, S, d, d);
  cpu::gelu_forward(a.head_g.data(), a.head_tanh.data(), a.head_h.data(),
                    static_cast<size_t>(S) * d);
  cpu::linear_forward(a.pred.data(), a.head_g.data(), w_.head_w2, w_.head_b2, S, d, 1);
  return a.pred;
}

template <class T>
void Transformer<T>::backward(const Batch& batch, const T* dpred) {
  const ModelConfig& c = config_;
  const Activations<T>& a = act_;
  const int N = a.n_tokens, S = a.n_seq, d = c.d_model, f = c.d_ff, H = c.n_head;
  if (N != batch.n_tokens() || S != batch.n_seq())
    throw std::logic_error("Transformer::backward: batch differs from the last forward's");
  const int* off = batch.offsets.data();
  const size_t Nd = static_cast<size_t>(N) * d, Nf = static_cast<size_t>(N) * f;
  const size_t Sd = static_cast<size_t>(S) * d, att_size = a.att_offsets[S];
  ActivationGrads<T>& g = grad_act_;
  for (auto* v : {&g.dresid, &g.dln, &g.datty}) grow(*v, Nd);
  grow(g.dqkv, 3 * Nd);
  if (c.pe == PositionalEncoding::kRope) grow(g.dqkv_rope, 3 * Nd);
  grow(g.dfch, Nf);
  grow(g.dfch_gelu, Nf);
  for (auto* v : {&g.dlast, &g.dlnf, &g.dhead_h, &g.dhead_g}) grow(*v, Sd);
  cpu::AttentionOptions<T> att_opt;
  att_opt.alibi_slopes = alibi_slopes_.empty() ? nullptr : alibi_slopes_.data();

  // pred = head_g·w2 + b2
  zero(g.dhead_g, Sd);
  cpu::linear_backward(g.dhead_g.data(), g_.head_w2, g_.head_b2, dpred, a.head_g.data(), w_.head_w2,
                       S, d, 1);
  // head_g = gelu(head_h)
  zero(g.dhead_h, Sd);
  cpu::gelu_backward(g.dhead_h.data(), a.head_h.data(), a.head_tanh.data(), g.dhead_g.data(), Sd);
  // head_h = lnf·W1 + b1
  zero(g.dlnf, Sd);
  cpu::linear_backward(g.dlnf.data(), g_.head_w1, g_.head_b1, g.dhead_h.data(), a.lnf.data(),
                       w_.head_w1, S, d, d);
  // lnf = layernorm(last)
  zero(g.dlast, Sd);
  cpu::layernorm_backward(g.dlast.data(), g_.lnf_g, g_.lnf_b, g.dlnf.data(), a.last.data(),
                          w_.lnf_g, a.lnf_mean.data(), a.lnf_rstd.data(), S, d);
  // last = the EOS rows of the final residual stream
  zero(g.dresid, Nd);
  cpu::gather_last_backward(g.dresid.data(), g.dlast.data(), off, S, d);

  // dresid holds dLoss/d(layer output); the residual connections pass it through unchanged and
  // each sub-layer's backward adds its own contribution into it.
  for (int l = c.n_layer - 1; l >= 0; --l) {
    const auto& L = w_.layers[l];
    auto& G = g_.layers[l];
    const T* x = l == 0 ? a.encoded.data() : a.resid_out.data() + (l - 1) * Nd;
    const T* ln1 = a.ln1.data() + l * Nd;
    const T* qkv = a.qkv.data() + l * 3 * Nd;
    const T* att = a.att.data() + l * att_size;
    const T* atty = a.atty.data() + l * Nd;
    const T* mid = a.resid_mid.data() + l * Nd;
    const T* ln2 = a.ln2.data() + l * Nd;
    const T* fch = a.fch.data() + l * Nf;
    const T* fch_gelu = a.fch_gelu.data() + l * Nf;

    // out = mid + fch_gelu·Wp + bp
    zero(g.dfch_gelu, Nf);
    cpu::linear_backward(g.dfch_gelu.data(), G.w_proj, G.b_proj, g.dresid.data(), fch_gelu,
                         L.w_proj, N, f, d);
    // fch_gelu = gelu(fch)
    zero(g.dfch, Nf);
    cpu::gelu_backward(g.dfch.data(), fch, a.fch_tanh.data() + l * Nf, g.dfch_gelu.data(), Nf);
    // fch = ln2·Wfc + bfc
    zero(g.dln, Nd);
    cpu::linear_backward(g.dln.data(), G.w_fc, G.b_fc, g.dfch.data(), ln2, L.w_fc, N, d, f);
    // ln2 = layernorm(mid): dresid becomes dLoss/dmid
    cpu::layernorm_backward(g.dresid.data(), G.ln2_g, G.ln2_b, g.dln.data(), mid, L.ln2_g,
                            a.ln2_mean.data() + l * N, a.ln2_rstd.data() + l * N, N, d);
    // mid = x + atty·Wo + bo
    zero(g.datty, Nd);
    cpu::linear_backward(g.datty.data(), G.w_o, G.b_o, g.dresid.data(), atty, L.w_o, N, d, d);
    // atty = attention(qkv, rotated by RoPE when used)
    zero(g.dqkv, 3 * Nd);
    if (c.pe == PositionalEncoding::kRope) {
      zero(g.dqkv_rope, 3 * Nd);
      cpu::attention_backward(g.dqkv_rope.data(), g.datty.data(), a.qkv_rope.data() + l * 3 * Nd,
                              att, off, a.att_offsets, S, d, H, att_opt);
      cpu::rope_backward(g.dqkv.data(), g.dqkv_rope.data(), off, S, d, H, rope_);
    } else {
      cpu::attention_backward(g.dqkv.data(), g.datty.data(), qkv, att, off, a.att_offsets, S, d, H,
                              att_opt);
    }
    // qkv = ln1·Wqkv + bqkv
    zero(g.dln, Nd);
    cpu::linear_backward(g.dln.data(), G.w_qkv, G.b_qkv, g.dqkv.data(), ln1, L.w_qkv, N, d, 3 * d);
    // ln1 = layernorm(x): dresid becomes dLoss/dx
    cpu::layernorm_backward(g.dresid.data(), G.ln1_g, G.ln1_b, g.dln.data(), x, L.ln1_g,
                            a.ln1_mean.data() + l * N, a.ln1_rstd.data() + l * N, N, d);
  }
  // encoded = wte[token] + wpe[position]
  cpu::embedding_backward(g_.wte, g_.wpe, g.dresid.data(), batch.tokens.data(), off, S, d);
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace lenlab
