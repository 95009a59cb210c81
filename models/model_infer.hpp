#pragma once
// Model<B>'s inference forward (included by models/model_impl.hpp): the same blocks as training,
// nothing kept for a backward, attention a row at a time (no [L, L] matrix), and, as in training,
// the last block at the rows the heads read only (its keys and values still come from every row).
#include "models/model.hpp"

namespace lenlab {

template <class B>
void Model<B>::infer(const PackedBatch<B>& in) {
  prepare(in);
  const ModelConfig& c = config_;
  const int N = in.rows, Qr = in.n_query(), d = c.d_model;
  // The last block has one row per read row: more than N when two heads read the same rows.
  const size_t K = K_, rows = std::max(N, Qr);
  reserve_infer(rows, N);
  InferScratch& s = infer_;
  const size_t stats_per_layer = K * rows * c.n_head * 2;
  if (keep_stats_) B::reserve(attention_stats_, c.n_layer * stats_per_layer);

  if (in.has_noise) {  // VCL's random prefix, as in training (x1 is free until layer 0)
    B::embedding_forward(s.x1.data(), in.tokens.data(), w_.wte, token_scale(), absolute_table(),
                         absolute_stride(), d, in.seqs(), models());
    B::prefix_noise_forward(s.x0.data(), s.x1.data(), in.noise.data(), in.noise_codes.data(), d,
                            in.seqs(), models());
  } else {
    B::embedding_forward(s.x0.data(), in.tokens.data(), w_.wte, token_scale(), absolute_table(),
                         absolute_stride(), d, in.seqs(), models());
  }
  T* x = s.x0.data();
  T* next = s.x1.data();
  for (int l = 0; l < c.n_layer; ++l) {
    const bool last = l == c.n_layer - 1;
    BlockTensors t = infer_block_tensors(next);
    t.x = x;
    t.Q = last ? Qr : N;
    if (last) {  // the residual at the read rows only
      t.query_rows = in.query_rows.data();
      B::gather_rows_forward(s.x_q.data(), x, t.query_rows, Qr, N, d, models());
      t.x_q = s.x_q.data();
    } else {
      t.x_q = x;
    }
    if (keep_stats_) t.row_stats = attention_stats_.data() + l * stats_per_layer;
    block_forward(l, t, in, /*train=*/false);
    std::swap(x, next);
  }
  heads_forward(x, in, /*keep=*/false);
}

template <class B>
void Model<B>::reserve_infer(size_t rows, size_t key_rows) {
  InferScratch& s = infer_;
  const size_t K = K_, d = config_.d_model, Nd = K * rows * d;
  for (auto* v : {&s.x0, &s.x1, &s.ln1, &s.x_q, &s.atty, &s.mid, &s.ln2}) B::reserve(*v, Nd);
  B::reserve(s.qkv, 3 * K * key_rows * d);
  if (rotary()) B::reserve(s.qkv_rope, 3 * K * key_rows * d);
  for (auto* v : {&s.fch, &s.fch_gelu}) B::reserve(*v, K * rows * config_.d_ff);
}

template <class B>
typename Model<B>::BlockTensors Model<B>::infer_block_tensors(T* out) {
  InferScratch& s = infer_;
  BlockTensors t{};
  t.ln1 = s.ln1.data();
  t.qkv = s.qkv.data();
  t.qkv_rope = s.qkv_rope.data();
  t.atty = s.atty.data();
  t.mid = s.mid.data();
  t.ln2 = s.ln2.data();
  t.fch = s.fch.data();
  t.fch_gelu = s.fch_gelu.data();
  t.out = out;
  return t;
}

}  // namespace lenlab
