#pragma once
// Model<B>'s incremental decoding (included by models/model_impl.hpp; the cache:
// models/decode_cache.hpp). A step runs the blocks on the appended rows only: their [q|k|v] rows
// are written into the cache, their queries attend over it with the inference attention
// (attention_infer, every backend's), and the block past attention runs on them as in infer().
// The last block runs at the rows read only, as in infer(). So a token costs one query over the
// cache per layer; the logits equal the full forward's at the same rows up to float rounding
// (tests/models/test_decode.cpp).
#include <fmt/format.h>

#include <stdexcept>

#include "core/error.hpp"
#include "models/model.hpp"

namespace lenlab {

template <class B>
DecodeCache<B> Model<B>::begin_decode(const DecodeSetup& setup) {
  const int n_seq = setup.n_seq, capacity = setup.capacity;
  if (n_seq < 1 || capacity < 1)
    throw UsageError(
        fmt::format("decoding needs at least one sequence of at least one token (given {} of {})",
                    n_seq, capacity));
  const int max_position = setup.max_position < 0 ? capacity - 1 : setup.max_position;
  const size_t K = K_, S = n_seq;
  if (!setup.lengths.empty() && setup.lengths.size() != K * S)
    throw std::invalid_argument("begin_decode: one length per sequence of every model, or none");
  if (!setup.attention.empty() && setup.attention.size() != K)
    throw std::invalid_argument("begin_decode: one attention spec per model, or none");
  if (positional_encoding_info(config_.pe).learned_table() && max_position >= config_.max_positions)
    throw UsageError(fmt::format(
        "decoding up to position {} is past the learned position table ({} rows); learned "
        "positions cannot be evaluated past their table",
        max_position, config_.max_positions));
  static const AttentionSpec kPlain;
  const auto spec = [&](size_t k) -> const AttentionSpec& {
    return setup.attention.empty() ? kPlain : *setup.attention[k];
  };
  DecodeCache<B> c;
  c.n_models = K_;
  c.n_seq = n_seq;
  c.capacity = capacity;
  c.n_layer = config_.n_layer;
  c.width = config_.d_model;
  c.max_position = max_position;
  c.attention = spec(0);
  for (size_t k = 1; k < K; ++k) {
    if (!spec(k).batches_with(c.attention))
      throw std::invalid_argument(
          "models decoded together need the same attention windows, rope scaling and "
          "temperature scope");
  }
  c.slot = decode_slot_rows(capacity, c.attention.window);
  c.filled.assign(K * S, 0);
  c.used.assign(K * S, 0);
  c.last_position.assign(K * S, -1);
  const size_t slot = c.slot;
  const size_t cache_size =
      static_cast<size_t>(config_.n_layer) * K * S * slot * 3 * config_.d_model;
  B::reserve(c.qkv, cache_size);
  B::fill_zero(c.qkv.data(), cache_size);  // decode() adds each row into its zeros once
  std::vector<int> off(K * (S + 1));
  c.host_positions.assign(K * S * slot, 0);
  for (size_t k = 0; k < K; ++k) {
    for (size_t s = 0; s <= S; ++s) off[k * (S + 1) + s] = static_cast<int>(s * slot);
    for (size_t s = 0; s < S; ++s)
      for (size_t i = 0; i < slot; ++i)
        c.host_positions[(k * S + s) * slot + i] = static_cast<int>(i);
  }
  B::upload(c.offsets, off.data(), off.size());
  B::upload(c.positions, c.host_positions.data(), c.host_positions.size());
  // The logit multipliers as PackedBatch::pack sets them: each model's spec's for the sequence's
  // length, times YaRN's for the largest position.
  const double rope_scale =
      rope_logit_scale(c.attention.rope_at(max_position, config_.rope_scaling));
  std::vector<T> scale(K * S);
  for (size_t i = 0; i < K * S; ++i) {
    const int tokens = setup.lengths.empty() ? capacity : setup.lengths[i];
    scale[i] = static_cast<T>(spec(i / S).scale_for(tokens) * rope_scale);
    c.scaled = c.scaled || scale[i] != T(1);
  }
  if (c.scaled) B::upload(c.seq_scale, scale.data(), scale.size());
  return c;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::decode(DecodeCache<B>& c,
                                                 const std::vector<std::vector<int>>& tokens,
                                                 bool every_row,
                                                 const std::vector<std::vector<int>>* positions) {
  const ModelConfig& cfg = config_;
  const int S = c.n_seq, C = c.capacity, V = cfg.vocab_size;
  const size_t K = K_;
  if (c.n_models != K_ || c.n_layer != cfg.n_layer || c.width != cfg.d_model)
    throw std::invalid_argument("decode: a cache begun for another model shape");
  if (tokens.size() != K * S)
    throw std::invalid_argument(
        fmt::format("decode: {} token lists for {} models of {} sequences", tokens.size(), K, S));
  if (positions && positions->size() != tokens.size())
    throw std::invalid_argument("decode: one position list per token list");
  // The appended rows, model k's sequence by sequence: Q, the most any model appends.
  int Q = 0;
  for (size_t k = 0; k < K; ++k) {
    int n = 0;
    for (int s = 0; s < S; ++s) {
      const std::vector<int>& add = tokens[k * S + s];
      const int have = c.filled[k * S + s];
      if (have + static_cast<int>(add.size()) > C)
        throw UsageError(
            fmt::format("sequence {} would hold {} tokens, past the cache's capacity of {}", s,
                        have + add.size(), C));
      for (size_t i = 0; i < add.size(); ++i)
        if (add[i] < 0 || add[i] >= V)
          throw UsageError(
              fmt::format("token id {} (sequence {}, offset {}) outside the "
                          "vocabulary of {}",
                          add[i], s, have + i, V));
      if (positions) {
        const std::vector<int>& at = (*positions)[k * S + s];
        if (at.size() != add.size())
          throw std::invalid_argument("decode: one position per appended token");
        int previous = c.last_position[k * S + s];
        for (size_t i = 0; i < at.size(); ++i) {
          if (at[i] < previous || at[i] < 0 || at[i] > c.max_position)
            throw UsageError(fmt::format(
                "position {} (sequence {}, offset {}) must be at least the previous one ({}) and "
                "at most the cache's largest, {}",
                at[i], s, have + i, std::max(previous, 0), c.max_position));
          previous = at[i];
        }
      } else if (c.last_position[k * S + s] + static_cast<int>(add.size()) > c.max_position) {
        throw UsageError(
            fmt::format("sequence {} would reach position {}, past the cache's largest, {}", s,
                        c.last_position[k * S + s] + add.size(), c.max_position));
      }
      n += static_cast<int>(add.size());
    }
    Q = std::max(Q, n);
  }
  // Each appended token's position: given, or one past its sequence's last.
  std::vector<std::vector<int>> at(K * S);
  for (size_t i = 0; i < K * S; ++i) {
    if (positions) {
      at[i] = (*positions)[i];
      continue;
    }
    for (size_t t = 0; t < tokens[i].size(); ++t)
      at[i].push_back(c.last_position[i] + 1 + static_cast<int>(t));
  }
  // The output rows: model k's appended rows sequence by sequence (base: each sequence's first),
  // or each sequence's last.
  const int R = every_row ? Q : S;
  std::vector<int> base(K * S, 0);
  for (size_t k = 0; k < K; ++k)
    for (int s = 1; s < S; ++s)
      base[k * S + s] = base[k * S + s - 1] + static_cast<int>(tokens[k * S + s - 1].size());
  std::vector<T> logits(K * R * V, T(0));
  // In parts that fit the slots: a full slot has its window moved down first (decode_slot_rows).
  const ops::AttentionWindow& w = c.attention.window;
  const int kept = w.n_global + std::max(w.n_local - 1, 0);  // rows in use after a move
  std::vector<int> done(K * S, 0);
  for (;;) {
    std::vector<std::vector<int>> part(K * S), part_at(K * S);
    std::vector<int> full;  // the sequences (k·S + s) whose slot moves first
    bool any = false;
    for (size_t i = 0; i < K * S; ++i) {
      const int n = static_cast<int>(tokens[i].size());
      if (done[i] == n) continue;
      const bool move = c.used[i] == c.slot;
      if (move) full.push_back(static_cast<int>(i));
      const int take = std::min(n - done[i], c.slot - (move ? kept : c.used[i]));
      part[i].assign(tokens[i].begin() + done[i], tokens[i].begin() + done[i] + take);
      part_at[i].assign(at[i].begin() + done[i], at[i].begin() + done[i] + take);
      any = true;
    }
    if (!any) break;
    if (!full.empty()) move_window_down(c, full);
    const std::vector<T> got = decode_rows(c, part, part_at, every_row);
    const size_t got_rows = got.size() / (K * V);
    for (size_t k = 0; k < K; ++k) {
      size_t q = 0;
      for (int s = 0; s < S; ++s) {
        const size_t i = k * S + s, n = part[i].size();
        if (every_row) {
          std::copy_n(got.begin() + (k * got_rows + q) * V, n * V,
                      logits.begin() + (k * R + base[i] + done[i]) * V);
          q += n;
        } else if (n > 0) {
          std::copy_n(got.begin() + i * V, V, logits.begin() + i * V);
        }
        done[i] += static_cast<int>(n);
      }
    }
  }
  return logits;
}

template <class B>
void Model<B>::move_window_down(DecodeCache<B>& c, const std::vector<int>& full) {
  const ops::AttentionWindow& w = c.attention.window;
  const int S = c.n_seq, keep = std::max(w.n_local - 1, 0), g = w.n_global;
  const size_t K = K_, d3 = 3 * static_cast<size_t>(config_.d_model), slot = c.slot;
  // Per model, the rows moving: the last `keep` of each full slot, down to just after its first g.
  std::vector<std::vector<int>> from(K), to(K);
  for (const int i : full) {
    const size_t k = i / S, s = i % S, first = s * slot;
    for (int t = 0; t < keep; ++t) {
      from[k].push_back(static_cast<int>(first + slot - keep + t));
      to[k].push_back(static_cast<int>(first + g + t));
    }
  }
  size_t M = 0;
  for (size_t k = 0; k < K; ++k) M = std::max(M, from[k].size());
  std::vector<int> from_rows(K * M, -1), to_rows(K * M, -1);
  for (size_t k = 0; k < K; ++k) {
    std::copy(from[k].begin(), from[k].end(), from_rows.begin() + k * M);
    std::copy(to[k].begin(), to[k].end(), to_rows.begin() + k * M);
  }
  const int rows = static_cast<int>(c.rows());
  if (M > 0) {
    B::upload(c.move_from, from_rows.data(), from_rows.size());
    B::upload(c.move_to, to_rows.data(), to_rows.size());
    B::reserve(c.moved, K * M * d3);
  }
  const size_t layer_size = K * c.rows() * d3;
  for (int l = 0; l < config_.n_layer; ++l) {
    T* cache = c.qkv.data() + l * layer_size;
    if (M > 0)
      B::gather_rows_forward(c.moved.data(), cache, c.move_from.data(), static_cast<int>(M), rows,
                             static_cast<int>(d3), models());
    for (const int i : full) {  // the slot past its first g rows back to 0, then the kept rows
      const size_t k = i / S, s = i % S;
      B::fill_zero(cache + (k * c.rows() + s * slot + g) * d3, (slot - g) * d3);
    }
    if (M > 0)
      B::gather_rows_backward(cache, c.moved.data(), c.move_to.data(), static_cast<int>(M), rows,
                              static_cast<int>(d3), models());
  }
  for (const int i : full) {  // their positions likewise
    const size_t k = i / S, s = i % S;
    int* p = c.host_positions.data() + (k * S + s) * slot;
    std::copy(p + slot - keep, p + slot, p + g);
    B::upload_to(c.positions.data() + (k * S + s) * slot + g, p + g, keep);
    c.used[i] = g + keep;
  }
}

template <class B>
std::vector<typename B::Scalar> Model<B>::decode_rows(DecodeCache<B>& c,
                                                      const std::vector<std::vector<int>>& tokens,
                                                      const std::vector<std::vector<int>>& at,
                                                      bool every_row) {
  const ModelConfig& cfg = config_;
  const int S = c.n_seq, d = cfg.d_model, H = cfg.n_head, V = cfg.vocab_size;
  const size_t K = K_, slot = c.slot;
  int Q = 0;
  for (size_t k = 0; k < K; ++k) {
    int n = 0;
    for (int s = 0; s < S; ++s) n += static_cast<int>(tokens[k * S + s].size());
    Q = std::max(Q, n);
  }
  const int R = every_row ? Q : S;
  std::vector<T> logits(K * R * V, T(0));
  if (Q == 0) return logits;
  std::vector<int> tok(K * Q, 0), pos(K * Q, 0), off(K * (S + 1), 0), rows(K * Q, -1);
  std::vector<int> read(K * R, -1), read_rows(K * R, -1), index(K * R, -1);
  for (size_t k = 0; k < K; ++k) {
    int q = 0;
    for (int s = 0; s < S; ++s) {
      off[k * (S + 1) + s] = q;
      const size_t i = k * S + s, n = tokens[i].size();
      int* host = c.host_positions.data() + i * slot + c.used[i];
      bool moved = false;  // a position not the row's default any more
      for (size_t t = 0; t < n; ++t) {
        tok[k * Q + q] = tokens[i][t];
        pos[k * Q + q] = at[i][t];
        rows[k * Q + q] = static_cast<int>(s * slot + c.used[i] + t);
        moved = moved || host[t] != at[i][t];
        host[t] = at[i][t];
        if (every_row) read[k * R + q] = q;
        ++q;
      }
      if (moved) B::upload_to(c.positions.data() + i * slot + c.used[i], host, n);
      if (!every_row && n > 0) read[k * R + s] = q - 1;
      c.used[i] += static_cast<int>(n);
      c.filled[i] += static_cast<int>(n);
      if (n > 0) c.last_position[i] = at[i][n - 1];
    }
    off[k * (S + 1) + S] = q;
    for (int r = 0; r < R; ++r)
      if (read[k * R + r] >= 0) {
        read_rows[k * R + r] = rows[k * Q + read[k * R + r]];
        index[k * R + r] = r;
      }
  }
  StagedUpload<B> staged;  // one copy where there were seven, each waiting for a GPU's stream
  staged.add(c.step_tokens, tok);
  staged.add(c.step_positions, pos);
  staged.add(c.step_offsets, off);
  staged.add(c.step_cache_rows, rows);
  staged.add(c.read_rows, read);
  staged.add(c.read_cache_rows, read_rows);
  staged.add(c.read_index, index);
  staged.upload(c.step_storage);

  // Once per cache (a learned bias's tables cost a pass over its parameters, FIRE's grow with the
  // square of the positions), again only when another forward has replaced them since.
  if (c.tables_version != tables_version_) {
    prepare_tables(c.max_position, c.attention);
    c.tables_version = tables_version_;
  }
  const ops::Models m = models();
  const ops::Seqs step{c.step_offsets.data(), c.step_positions.data(), S, Q};
  const ops::Seqs cached = c.seqs();
  reserve_infer(std::max(Q, R), Q);
  InferScratch& s = infer_;

  B::embedding_forward(s.x0.data(), c.step_tokens.data(), w_.wte, token_scale(), absolute_table(),
                       absolute_stride(), d, step, m);
  T* x = s.x0.data();
  T* next = s.x1.data();
  const size_t layer_size = K * c.rows() * 3 * d;
  for (int l = 0; l < cfg.n_layer; ++l) {
    const auto& L = w_.layers[l];
    T* cache = c.qkv.data() + l * layer_size;
    // The appended rows' [q|k|v] (rotated: RoPE first), written into their cache rows (gather's
    // backward adds them into rows never written before, which hold 0: a copy).
    B::layernorm_forward(s.ln1.data(), nullptr, nullptr, x, L.ln1_g, L.ln1_b, Q, d, m);
    B::linear_forward(s.qkv.data(), s.ln1.data(), L.w_qkv, L.b_qkv, Q, d, 3 * d, m);
    const T* qkv = s.qkv.data();
    if (rope_first()) {
      B::rope_forward(s.qkv_rope.data(), s.qkv.data(), rope_cos_.data(), rope_sin_.data(), d, H,
                      step, m);
      qkv = s.qkv_rope.data();
    }
    B::gather_rows_backward(cache, qkv, c.step_cache_rows.data(), Q, static_cast<int>(c.rows()),
                            3 * d, m);
    const bool last = l == cfg.n_layer - 1;
    BlockTensors t = infer_block_tensors(next);
    t.Q = last ? R : Q;
    t.x = x;
    t.x_q = x;
    if (last) {  // the residual at the read rows only
      B::gather_rows_forward(s.x_q.data(), x, c.read_rows.data(), R, Q, d, m);
      t.x_q = s.x_q.data();
    }
    ops::AttentionArgs<T> args =
        attention_args(c.attention, c.scaled ? c.seq_scale.data() : nullptr, l);
    args.tile_few_rows = true;  // a new row over a long cache: one product, not key by key
    B::attention_infer(t.atty, cache, last ? c.read_cache_rows.data() : c.step_cache_rows.data(),
                       t.Q, d, H, args, cached, m);
    block_after_attention(l, t);
    std::swap(x, next);
  }
  B::reserve(token_out_, K * R * V);
  token_head_.forward(token_out_.data(), x, c.read_index.data(), R, R, cfg, w_, m, false);
  B::download(logits.data(), token_out_.data(), logits.size());
  return logits;
}

}  // namespace lenlab
