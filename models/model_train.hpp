#pragma once
// Model<B>'s training forward and its backward, side by side (included by models/model_impl.hpp):
// the embedding, the blocks (models/model_block.hpp) and the heads (models/heads.hpp), and back.
#include "models/model.hpp"

namespace lenlab {

template <class B>
void Model<B>::forward(const PackedBatch<B>& in) {
  prepare(in);
  const ModelConfig& c = config_;
  const TrainLayout z = train_layout(in);
  const int N = z.N, Qr = z.Q, d = c.d_model;
  const size_t K = K_, Lc = c.n_layer, Nd = z.Nd, Nf = z.Nf, N1 = z.N1, att_size = z.att_size;
  Activations& a = act_;
  B::reserve(a.encoded, K * N * d);
  for (auto* v : {&a.ln1, &a.atty, &a.resid_mid, &a.ln2, &a.resid_out}) B::reserve(*v, Lc * Nd);
  for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) B::reserve(*v, Lc * N1);
  B::reserve(a.qkv, Lc * 3 * Nd);
  if (rotary()) B::reserve(a.qkv_rope, Lc * 3 * Nd);
  B::reserve(a.att, Lc * att_size);
  for (auto* v : {&a.fch, &a.fch_gelu, &a.fch_tanh}) B::reserve(*v, Lc * Nf);
  B::reserve(a.x_q, K * Qr * d);
  B::reserve(a.atty_all, K * N * d);

  if (in.has_noise) {  // VCL's random prefix: Gaussian rows in place of the first embeddings
    B::reserve(a.embedded, K * N * d);
    B::embedding_forward(a.embedded.data(), in.tokens.data(), w_.wte, token_scale(),
                         absolute_table(), absolute_stride(), d, in.seqs(), models());
    B::prefix_noise_forward(a.encoded.data(), a.embedded.data(), in.noise.data(),
                            in.noise_codes.data(), d, in.seqs(), models());
  } else {
    B::embedding_forward(a.encoded.data(), in.tokens.data(), w_.wte, token_scale(),
                         absolute_table(), absolute_stride(), d, in.seqs(), models());
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
    t.qkv_rope = rotary() ? a.qkv_rope.data() + l * 3 * Nd : nullptr;
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
  const TrainLayout z = train_layout(in);
  const int N = z.N, Qr = z.Q, d = c.d_model;
  const size_t K = K_;
  const ops::Models m = models();
  const ops::Seqs seqs = in.seqs();
  ActivationGrads& g = grad_act_;
  for (auto* v : {&g.dresid, &g.dln, &g.datty}) B::reserve(*v, z.Nd);
  for (auto* v : {&g.dresid_q, &g.datty_q}) B::reserve(*v, K * Qr * d);
  B::reserve(g.dqkv, 3 * z.Nd);
  if (rope_first()) B::reserve(g.dqkv_rope, 3 * z.Nd);
  B::reserve(g.dfch, z.Nf);
  B::reserve(g.dfch_gelu, z.Nf);
  if (B::kDevice || learned_bias()) B::reserve(g.scratch, z.att_size);
  if (learned_bias()) {  // every layer's dLoss/db adds into its table's
    B::reserve(dbias_tables_, bias_->n_tables() * bias_per_table());
    B::fill_zero(dbias_tables_.data(), bias_->n_tables() * bias_per_table());
  }

  // The heads read rows of the last layer's output [K, Q, d]: its gradient is Σ_heads theirs.
  B::fill_zero(g.dresid_q.data(), K * Qr * d);
  if (dscalar && in.n_scalar > 0)
    scalar_head_.backward(g.dresid_q.data(), dscalar, in.scalar_in_query.data(), c, w_, g_, m);
  if (dlogits && in.n_token > 0)
    token_head_.backward(g.dresid_q.data(), dlogits, in.token_in_query.data(), c, w_, g_, m);

  // The blocks in reverse (models/model_block.hpp); dresid ends as dLoss/d(encoded).
  for (int l = c.n_layer - 1; l >= 0; --l) block_backward(l, in);
  // encoded = wte[token] + wpe[position] (then VCL's random prefix, if any); a fixed table
  // (g_.wpe null) takes no gradient
  const T* dembedded = g.dresid.data();
  if (in.has_noise) {
    B::reserve(g.dembedded, K * N * d);
    B::fill_zero(g.dembedded.data(), K * N * d);
    B::prefix_noise_backward(g.dembedded.data(), g.dresid.data(), a.embedded.data(),
                             in.noise.data(), in.noise_codes.data(), d, seqs, m);
    dembedded = g.dembedded.data();
  }
  B::embedding_backward(g_.wte, token_scale(), g_.wpe, dembedded, in.tokens.data(), c.vocab_size,
                        c.max_positions, d, seqs, m);
  // b = the encoding's table of its parameters
  if (learned_bias()) chain_bias_gradients();
}

}  // namespace lenlab
