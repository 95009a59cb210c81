#pragma once
// One transformer block, its forward and its backward side by side (included by
// models/model_impl.hpp). Each backward step quotes the forward line it differentiates; every
// backward adds into its gradient outputs (models/cpu/README.md's rule), so each is preceded by
// the fill_zero of the buffer it starts.
#include "models/model.hpp"

namespace lenlab {

// One pre-LN block, for training (probabilities kept) and inference (nothing kept) alike:
//   a = LN_1(x);  [q|k|v] = a·W_qkv + b_qkv;  (RoPE);  o = attention;  mid = x + o·W_o + b_o
//   out = mid + GELU(LN_2(mid)·W_fc + b_fc)·W_proj + b_proj
// LN_1 and [q|k|v] run at every row (every row is a key); from o on, only the rows t.query_rows
// (every row when null). Training's attention runs at every row and its output is gathered.
template <class B>
void Model<B>::block_forward(int l, const BlockTensors& t, const PackedBatch<B>& in, bool train) {
  const ModelConfig& c = config_;
  const auto& L = w_.layers[l];
  const int N = in.rows, Q = t.Q, d = c.d_model, H = c.n_head;
  const ops::Models m = models();
  const ops::Seqs seqs = in.seqs();
  ops::AttentionArgs<T> args = attention_args(in, l);
  if (train && t.query_rows) args.row_read = in.query_mask.data();
  B::layernorm_forward(t.ln1, t.ln1_mean, t.ln1_rstd, t.x, L.ln1_g, L.ln1_b, N, d, m);
  B::linear_forward(t.qkv, t.ln1, L.w_qkv, L.b_qkv, N, d, 3 * d, m);
  const T* qkv_att = t.qkv;
  if (rope_first()) {
    B::rope_forward(t.qkv_rope, t.qkv, rope_cos_.data(), rope_sin_.data(), d, H, seqs, m);
    qkv_att = t.qkv_rope;
  }
  if (!train) {
    args.row_stats = t.row_stats;
    B::attention_infer(t.atty, qkv_att, t.query_rows, Q, d, H, args, seqs, m);
  } else if (t.query_rows) {
    B::attention_forward(t.atty_all, t.att, qkv_att, d, H, args, in.prob(), seqs, m);
    B::gather_rows_forward(t.atty, t.atty_all, t.query_rows, Q, N, d, m);
  } else {
    B::attention_forward(t.atty, t.att, qkv_att, d, H, args, in.prob(), seqs, m);
  }
  block_after_attention(l, t);
}

template <class B>
void Model<B>::block_after_attention(int l, const BlockTensors& t) {
  const auto& L = w_.layers[l];
  const int Q = t.Q, d = config_.d_model, f = config_.d_ff;
  const ops::Models m = models();
  const size_t Qd = static_cast<size_t>(K_) * Q * d, Qf = static_cast<size_t>(K_) * Q * f;
  B::linear_forward(t.mid, t.atty, L.w_o, L.b_o, Q, d, d, m);
  B::add_inplace(t.mid, t.x_q, Qd);  // residual
  B::layernorm_forward(t.ln2, t.ln2_mean, t.ln2_rstd, t.mid, L.ln2_g, L.ln2_b, Q, d, m);
  B::linear_forward(t.fch, t.ln2, L.w_fc, L.b_fc, Q, d, f, m);
  B::gelu_forward(t.fch_gelu, t.fch_tanh, t.fch, Qf);
  B::linear_forward(t.out, t.fch_gelu, L.w_proj, L.b_proj, Q, f, d, m);
  B::add_inplace(t.out, t.mid, Qd);  // residual
}

template <class B>
typename Model<B>::TrainLayout Model<B>::train_layout(const PackedBatch<B>& in) const {
  TrainLayout z;
  z.N = in.rows;
  z.Q = in.n_query();
  const size_t K = K_, rows = std::max(z.N, z.Q);
  z.Nd = K * rows * config_.d_model;
  z.Nf = K * rows * config_.d_ff;
  z.N1 = K * rows;
  z.att_size = std::max<size_t>(1, K * in.prob_stride);
  return z;
}

template <class B>
void Model<B>::block_backward(int l, const PackedBatch<B>& in) {
  const ModelConfig& c = config_;
  const Activations& a = act_;
  ActivationGrads& g = grad_act_;
  const TrainLayout z = train_layout(in);
  const int N = z.N, Qr = z.Q, d = c.d_model, f = c.d_ff, H = c.n_head;
  const size_t K = K_, Nd = z.Nd, Nf = z.Nf, N1 = z.N1, att_size = z.att_size;
  const ops::Models m = models();
  const ops::Seqs seqs = in.seqs();
  const bool learned_bias = this->learned_bias(), rope_first = this->rope_first();
  const size_t bias_per_table = this->bias_per_table();
  const int* query_rows = in.query_rows.data();
  // dq holds dLoss/d(layer output) at the rows past attention (the read rows in the last layer,
  // every row below); the residual connections pass it through unchanged and each sub-layer's
  // backward adds its own contribution into it.
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

}  // namespace lenlab
