#pragma once
// Model<B>'s training forward and its backward (included by models/model_impl.hpp).
#include "models/model.hpp"

namespace lenlab {

template <class B>
void Model<B>::forward(const PackedBatch<B>& in) {
  prepare(in);
  const ModelConfig& c = config_;
  const int N = in.rows, Qr = in.n_query(), d = c.d_model, f = c.d_ff;
  // Each layer's slot holds max(N, Q) rows: N below the last layer, Q in the last one past its
  // attention (more than N when both heads read the same rows).
  const size_t K = K_, Lc = c.n_layer, rows = std::max(N, Qr);
  const size_t Nd = K * rows * d, Nf = K * rows * f, N1 = K * rows;
  const size_t att_size = std::max<size_t>(1, K * in.prob_stride);
  Activations& a = act_;
  B::reserve(a.encoded, K * N * d);
  for (auto* v : {&a.ln1, &a.atty, &a.resid_mid, &a.ln2, &a.resid_out}) B::reserve(*v, Lc * Nd);
  for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) B::reserve(*v, Lc * N1);
  B::reserve(a.qkv, Lc * 3 * Nd);
  if (c.pe == PositionalEncoding::kRope) B::reserve(a.qkv_rope, Lc * 3 * Nd);
  B::reserve(a.att, Lc * att_size);
  for (auto* v : {&a.fch, &a.fch_gelu, &a.fch_tanh}) B::reserve(*v, Lc * Nf);
  B::reserve(a.x_q, K * Qr * d);
  B::reserve(a.atty_all, K * N * d);

  if (in.has_noise) {  // VCL's random prefix: Gaussian rows in place of the first embeddings
    B::reserve(a.embedded, K * N * d);
    B::embedding_forward(a.embedded.data(), in.tokens.data(), w_.wte, w_.wpe, d, in.seqs(),
                         models());
    B::prefix_noise_forward(a.encoded.data(), a.embedded.data(), in.noise.data(),
                            in.noise_codes.data(), d, in.seqs(), models());
  } else {
    B::embedding_forward(a.encoded.data(), in.tokens.data(), w_.wte, w_.wpe, d, in.seqs(),
                         models());
  }
  const T* x = a.encoded.data();
  for (int l = 0; l < c.n_layer; ++l) {
    BlockTensors t;
    t.x = t.x_q = x;
    t.Q = N;
    if (l == c.n_layer - 1) {  // past attention, the rows the heads read only
      t.query_rows = in.query_rows.data();
      t.Q = Qr;
      B::gather_rows_forward(a.x_q.data(), x, t.query_rows, Qr, N, d, models());
      t.x_q = a.x_q.data();
      t.atty_all = a.atty_all.data();
    }
    t.ln1 = a.ln1.data() + l * Nd;
    t.ln1_mean = a.ln1_mean.data() + l * N1;
    t.ln1_rstd = a.ln1_rstd.data() + l * N1;
    t.qkv = a.qkv.data() + l * 3 * Nd;
    t.qkv_rope = c.pe == PositionalEncoding::kRope ? a.qkv_rope.data() + l * 3 * Nd : nullptr;
    t.att = a.att.data() + l * att_size;
    t.atty = a.atty.data() + l * Nd;
    t.mid = a.resid_mid.data() + l * Nd;
    t.ln2 = a.ln2.data() + l * Nd;
    t.ln2_mean = a.ln2_mean.data() + l * N1;
    t.ln2_rstd = a.ln2_rstd.data() + l * N1;
    t.fch = a.fch.data() + l * Nf;
    t.fch_gelu = a.fch_gelu.data() + l * Nf;
    t.fch_tanh = a.fch_tanh.data() + l * Nf;
    t.out = a.resid_out.data() + l * Nd;
    block_forward(l, t, in, /*train=*/true);
    x = t.out;
  }
  heads_forward(x, in, /*keep=*/true);
}

template <class B>
void Model<B>::backward(const PackedBatch<B>& in, const T* dscalar, const T* dlogits) {
  const ModelConfig& c = config_;
  const Activations& a = act_;
  const int N = in.rows, Qr = in.n_query(), d = c.d_model, f = c.d_ff, H = c.n_head;
  const size_t K = K_, rows = std::max(N, Qr);
  const size_t Nd = K * rows * d, Nf = K * rows * f, N1 = K * rows;  // a layer's slot
  const size_t att_size = std::max<size_t>(1, K * in.prob_stride);
  const ops::Models m = models();
  const ops::Seqs seqs = in.seqs();
  const bool learned_bias = bias_ && bias_->learned();
  const size_t bias_per_table = learned_bias ? K * c.n_head * bias_rows_ * bias_cols_ : 0;
  const bool rope_first = c.pe == PositionalEncoding::kRope && !rope_in_attention_;
  const int* query_rows = in.query_rows.data();
  ActivationGrads& g = grad_act_;
  for (auto* v : {&g.dresid, &g.dln, &g.datty}) B::reserve(*v, Nd);
  for (auto* v : {&g.dresid_q, &g.datty_q}) B::reserve(*v, K * Qr * d);
  B::reserve(g.dqkv, 3 * Nd);
  if (rope_first) B::reserve(g.dqkv_rope, 3 * Nd);
  B::reserve(g.dfch, Nf);
  B::reserve(g.dfch_gelu, Nf);
  if (B::kDevice || learned_bias) B::reserve(g.scratch, att_size);
  if (learned_bias) {  // every layer's dLoss/db adds into its table's
    B::reserve(dbias_tables_, bias_->n_tables() * bias_per_table);
    B::fill_zero(dbias_tables_.data(), bias_->n_tables() * bias_per_table);
  }

  // The heads read rows of the last layer's output [K, Q, d]: its gradient is Σ_heads theirs.
  B::fill_zero(g.dresid_q.data(), K * Qr * d);
  if (dscalar && in.n_scalar > 0)
    scalar_head_.backward(g.dresid_q.data(), dscalar, in.scalar_in_query.data(), c, w_, g_, m);
  if (dlogits && in.n_token > 0)
    token_head_.backward(g.dresid_q.data(), dlogits, in.token_in_query.data(), c, w_, g_, m);

  // dq holds dLoss/d(layer output) at the rows past attention (the read rows in the last layer,
  // every row below); the residual connections pass it through unchanged and each sub-layer's
  // backward adds its own contribution into it.
  for (int l = c.n_layer - 1; l >= 0; --l) {
    const bool last = l == c.n_layer - 1;
    const int Q = last ? Qr : N;
    const size_t Qd = K * Q * d, Qf = K * Q * f;
    T* dq = last ? g.dresid_q.data() : g.dresid.data();
    T* datty = last ? g.datty_q.data() : g.datty.data();
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
    B::fill_zero(g.dfch_gelu.data(), Qf);
    B::linear_backward(g.dfch_gelu.data(), G.w_proj, G.b_proj, dq, fch_gelu, L.w_proj, Q, f, d, m);
    // fch_gelu = gelu(fch)
    B::fill_zero(g.dfch.data(), Qf);
    B::gelu_backward(g.dfch.data(), fch, a.fch_tanh.data() + l * Nf, g.dfch_gelu.data(), Qf);
    // fch = ln2·Wfc + bfc
    B::fill_zero(g.dln.data(), Qd);
    B::linear_backward(g.dln.data(), G.w_fc, G.b_fc, g.dfch.data(), ln2, L.w_fc, Q, d, f, m);
    // ln2 = layernorm(mid): dq becomes dLoss/dmid
    B::layernorm_backward(dq, G.ln2_g, G.ln2_b, g.dln.data(), mid, L.ln2_g,
                          a.ln2_mean.data() + l * N1, a.ln2_rstd.data() + l * N1, Q, d, m);
    // mid = x_q + atty·Wo + bo
    B::fill_zero(datty, Qd);
    B::linear_backward(datty, G.w_o, G.b_o, dq, atty, L.w_o, Q, d, d, m);
    if (last) {  // x_q = x[query rows], atty = attention[query rows]: back to every row
      B::fill_zero(g.dresid.data(), K * N * d);
      B::gather_rows_backward(g.dresid.data(), dq, query_rows, Q, N, d, m);
      B::fill_zero(g.datty.data(), K * N * d);
      B::gather_rows_backward(g.datty.data(), datty, query_rows, Q, N, d, m);
    }
    // atty = attention(qkv, rotated by RoPE first when used that way), at every row (in the last
    // layer, at the read rows: the others' p are 0)
    ops::AttentionArgs<T> args = attention_args(in, l);
    args.row_read = last ? in.query_mask.data() : nullptr;
    if (in.has_detached) args.row_detached = in.detached.data();  // VCL's detached prefix
    if (learned_bias) args.dbias = dbias_tables_.data() + bias_->table_of_layer(l) * bias_per_table;
    B::fill_zero(g.dqkv.data(), K * N * 3 * d);
    if (rope_first) {
      B::fill_zero(g.dqkv_rope.data(), K * N * 3 * d);
      B::attention_backward(g.dqkv_rope.data(), g.scratch.data(), g.datty.data(),
                            a.qkv_rope.data() + l * 3 * Nd, att, d, H, args, in.prob(), seqs, m);
      B::rope_backward(g.dqkv.data(), g.dqkv_rope.data(), rope_cos_.data(), rope_sin_.data(), d, H,
                       seqs, m);
    } else {
      B::attention_backward(g.dqkv.data(), g.scratch.data(), g.datty.data(), qkv, att, d, H, args,
                            in.prob(), seqs, m);
    }
    // qkv = ln1·Wqkv + bqkv
    B::fill_zero(g.dln.data(), K * N * d);
    B::linear_backward(g.dln.data(), G.w_qkv, G.b_qkv, g.dqkv.data(), ln1, L.w_qkv, N, d, 3 * d, m);
    // ln1 = layernorm(x): dresid becomes dLoss/dx
    B::layernorm_backward(g.dresid.data(), G.ln1_g, G.ln1_b, g.dln.data(), x, L.ln1_g,
                          a.ln1_mean.data() + l * N1, a.ln1_rstd.data() + l * N1, N, d, m);
  }
  // encoded = wte[token] + wpe[position] (then VCL's random prefix, if any)
  const T* dembedded = g.dresid.data();
  if (in.has_noise) {
    B::reserve(g.dembedded, K * N * d);
    B::fill_zero(g.dembedded.data(), K * N * d);
    B::prefix_noise_backward(g.dembedded.data(), g.dresid.data(), a.embedded.data(),
                             in.noise.data(), in.noise_codes.data(), d, seqs, m);
    dembedded = g.dembedded.data();
  }
  B::embedding_backward(g_.wte, g_.wpe, dembedded, in.tokens.data(), c.vocab_size, c.max_positions,
                        d, seqs, m);
  // b = the encoding's table of its parameters
  if (learned_bias) chain_bias_gradients();
}

}  // namespace lenlab
