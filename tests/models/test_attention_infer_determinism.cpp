// The inference attention gives the same bits wherever the heap puts its scratch: its row sums are
// vectorised by Eigen, whose sums over an unaligned buffer start with a scalar head as long as the
// buffer's misalignment, so a buffer at another address summed in another order. Runs evaluated
// side by side once differed in the last bits (models/cpu/attention_infer.hpp's Scratch).
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "models/cpu/attention_infer.hpp"

namespace lenlab {

TEST_CASE("attention_infer's output does not depend on where the heap puts its scratch") {
  const int d = 64, n_head = 4, L = 60;  // one sequence past a tile's worth of query rows
  std::vector<float> qkv(static_cast<size_t>(L) * 3 * d);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (float& x : qkv) x = normal(rng);
  std::vector<int> offsets = {0, L}, positions(L);
  for (int i = 0; i < L; ++i) positions[i] = i;
  ops::Seqs seqs;
  seqs.offsets = offsets.data();
  seqs.positions = positions.data();
  seqs.n_seq = 1;
  seqs.rows = L;
  const ops::AttentionArgs<float> args;

  std::vector<float> first;
  // Blocks of 4..60 bytes held while attention runs move where its scratch lands, through every
  // misalignment a 16-byte-aligned allocation can have against a 32- or 64-byte packet.
  for (size_t shift = 0; shift < 16; ++shift) {
    std::vector<std::unique_ptr<char[]>> held;
    for (size_t b = 0; b < shift; ++b) held.emplace_back(new char[4 * (shift + 1)]);
    std::vector<float> out(static_cast<size_t>(L) * d);
    cpu::attention_infer(out.data(), qkv.data(), nullptr, L, d, n_head, args, seqs);
    if (first.empty()) {
      first = out;
      continue;
    }
    INFO("heap shift " << shift);
    CHECK(out == first);
  }
}

}  // namespace lenlab
