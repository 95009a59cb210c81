#pragma once
// The key–value cache of incremental decoding (Model::begin_decode and Model::decode,
// models/model_decode.hpp). Per layer it holds the [q|k|v] rows of the tokens seen so far
// (rotated when RoPE rotates q and k before attention; with a Λ-mask only those a later query can
// see: decode_slot_rows), sequence s of model k in a slot of `slot` rows at rows s·slot.., so that
// the inference attention (attention_infer) reads it exactly as it reads a packed batch: a query
// at row i of its slot sees keys 0..i, and the rows past the ones in use are never read. q is kept
// beside k and v because attention_infer reads rows of that one layout: a third more memory than
// k and v alone.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/attention_spec.hpp"
#include "models/ops/args.hpp"
#include "models/staged_upload.hpp"

namespace lenlab {

// What a cache is begun for (Model::begin_decode).
struct DecodeSetup {
  int n_seq = 1;          // sequences per model
  int capacity = 0;       // tokens a sequence holds at most
  int max_position = -1;  // the largest position id a token will take; −1: capacity − 1
  // How each model attends (one per model, windows and RoPE extensions alike, as in
  // PackedBatch::pack), or empty: plain causal attention.
  std::vector<const AttentionSpec*> attention;
  // [K·n_seq] each sequence's full length in tokens, which sets a temperature by length as the
  // full forward of that sequence would; empty: capacity.
  std::vector<int> lengths;
};

// Rows a sequence's slot holds: every token, or with a Λ-mask (n_local > 0) at most the first
// n_global and 2·n_local more: when the slot is full, its last n_local − 1 rows move down to follow
// the first n_global and the rest are evicted, which keeps every key a later query may see. The
// mask admits keys by row (models/ops/args.hpp), and rows stay consecutive tokens after the move,
// so it admits the same keys; distances come from the positions kept with the rows.
inline int decode_slot_rows(int capacity, const ops::AttentionWindow& window) {
  if (window.n_local <= 0) return capacity;
  return static_cast<int>(std::min<long long>(
      capacity, static_cast<long long>(window.n_global) + 2LL * window.n_local));
}

template <class B>
struct DecodeCache {
  using T = typename B::Scalar;
  template <class U>
  using Buffer = typename B::template Buffer<U>;

  int n_models = 0;                 // K
  int n_seq = 0;                    // S: sequence slots per model
  int capacity = 0;                 // tokens a sequence may take in all
  int slot = 0;                     // rows a slot holds (decode_slot_rows)
  int n_layer = 0, width = 0;       // the model's layers and d_model
  int max_position = 0;             // the largest position id a token may take
  AttentionSpec attention;          // the window and RoPE extension (model 0's spec)
  std::vector<int> filled;          // [K, S] tokens each sequence has taken (host)
  std::vector<int> used;            // [K, S] rows of its slot in use (host)
  std::vector<int> last_position;   // [K, S] the position of each sequence's last token, or −1
  std::vector<int> host_positions;  // [K, S·slot] positions' copy on the host

  Buffer<T> qkv;          // [n_layer, K, S·slot, 3d]
  Buffer<int> offsets;    // [K, S + 1]: slot s starts at row s·slot
  Buffer<int> positions;  // [K, S·slot]: each cached row's position
  Buffer<T> seq_scale;    // [K, S] logit multipliers (only when scaled)
  bool scaled = false;
  // The model's tables_version_ when this cache last prepared its tables (0: never).
  uint64_t tables_version = 0;

  // A step's rows, rebuilt by every decode() and uploaded in one copy into step_storage
  // (models/staged_upload.hpp): the appended tokens [K, Q] (model k's sequence by sequence), their
  // positions, offsets [K, S + 1] among them, their rows in the cache [K, Q], the rows read ([K,
  // R], indices into the appended rows), the same as cache rows, and 0..R−1 (the token head's
  // index into the read rows). Then rows moved down a full slot (from, to) and their [q|k|v]
  // between the two.
  DevicePart<int> step_tokens, step_positions, step_offsets, step_cache_rows;
  DevicePart<int> read_rows, read_cache_rows, read_index;
  Buffer<std::byte> step_storage;
  Buffer<int> move_from, move_to;
  Buffer<T> moved;

  size_t rows() const { return static_cast<size_t>(n_seq) * slot; }  // per model
  // The cache's size in bytes (the [q|k|v] rows and their positions).
  size_t bytes() const {
    const size_t per_model =
        rows() * (static_cast<size_t>(n_layer) * 3 * width * sizeof(T) + sizeof(int));
    return per_model * n_models;
  }
  ops::Seqs seqs() const {
    return {offsets.data(), positions.data(), n_seq, static_cast<int>(rows())};
  }
};

}  // namespace lenlab
