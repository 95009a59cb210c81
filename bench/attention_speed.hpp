#pragma once
// lenlab_bench's attention table: the training forward + backward of causal attention alone (the
// CPU backend's ops, float, one thread) on batches of equal-length sequences at lengths 8..512,
// one query row at a time (the row path) and in tiles of matrix products (the tiled path) on the
// same blocks, in GFLOP/s and % of the core's sgemm peak. It says from which length the tiles win
// (detail::kMinTiledLength) and how far the attention of the text model's windows is from the
// products' speed. Prints figures; never passes or fails on time.
//
// FLOPs as the step counts them (bench_train.cpp): forward Σ_(seq, head, query i) 4·hd·(i+1)
// (q·k and p·v), backward twice that (dP, dV, dQ, dK).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "core/cpu_time.hpp"
#include "core/rng.hpp"
#include "models/cpu/attention.hpp"

namespace lenlab::bench {

// Seconds of one training forward + backward of attention over `seqs` sequences of L tokens
// (d_model d, n_head heads), best of 3 after a warm-up, with blocks of min_tiled or more tokens
// tiled.
inline double attention_step_seconds(int L, int seqs, int d, int n_head, int min_tiled) {
  const int N = L * seqs;
  std::vector<int> offsets(seqs + 1), positions(N);
  for (int s = 0; s <= seqs; ++s) offsets[s] = s * L;
  for (int r = 0; r < N; ++r) positions[r] = r % L;
  const std::vector<int64_t> blocks = ops::attention_offsets(offsets.data(), seqs, n_head);
  Rng rng(7);
  cpu::Buffer<float> qkv(static_cast<size_t>(N) * 3 * d), dout(static_cast<size_t>(N) * d);
  for (float& x : qkv) x = static_cast<float>(rng.normal());
  for (float& x : dout) x = static_cast<float>(rng.normal());
  cpu::Buffer<float> out(dout.size()), dqkv(qkv.size()), att(static_cast<size_t>(blocks.back()));
  const ops::Seqs q{offsets.data(), positions.data(), seqs, N};
  const ops::ProbLayout prob{blocks.data(), att.size()};
  const ops::AttentionArgs<float> a;  // plain causal attention, as the text model trains
  const int kept = cpu::detail::min_tiled_length();
  cpu::detail::min_tiled_length() = min_tiled;
  double best = 1e30;
  for (int pass = 0; pass < 4; ++pass) {
    std::fill(dqkv.begin(), dqkv.end(), 0.f);
    const double start = thread_cpu_seconds();
    cpu::attention_forward(out.data(), att.data(), qkv.data(), d, n_head, a, prob, q);
    cpu::attention_backward(dqkv.data(), static_cast<float*>(nullptr), dout.data(), qkv.data(),
                            att.data(), d, n_head, a, prob, q);
    const double s = cpu_seconds_since(start);
    if (pass > 0) best = std::min(best, s);  // pass 0 warms up
  }
  cpu::detail::min_tiled_length() = kept;
  return best;
}

// The table, for the text model's heads (d_model 128, 4 heads of 32), ~8192 tokens per length.
inline void print_attention_table(double peak) {
  const int d = 128, n_head = 4, hd = d / n_head;
  fmt::print(
      "  attention alone (training forward + backward, d_model {}, {} heads of {}, ~8192 tokens "
      "per length, best of 3; tiled from {} tokens in training):\n",
      d, n_head, hd, cpu::detail::kMinTiledLength);
  fmt::print("    {:>7} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "length", "rows us", "tiles us",
             "rows GF/s", "tiles GF/s", "tiles/rows");
  for (int L = 8; L <= 512; L *= 2) {
    const int seqs = std::max(1, 8192 / L);
    const double flops = 3.0 * seqs * n_head * 2.0 * hd * L * (L + 1);
    const double rows = attention_step_seconds(L, seqs, d, n_head, INT_MAX);
    const double tiles = attention_step_seconds(L, seqs, d, n_head, 0);
    fmt::print(
        "    {:>7} {:>10.0f} {:>10.0f} {:>10.2f} {:>10.2f} {:>7.2f}x   ({:.1f}% of peak tiled)\n",
        L, 1e6 * rows, 1e6 * tiles, flops / rows * 1e-9, flops / tiles * 1e-9, rows / tiles,
        100 * flops / tiles * 1e-9 / peak);
  }
}

}  // namespace lenlab::bench
