// Streaming evaluation (train/stream_eval.hpp): each chunk's cross-entropy equals a brute force
// over the full inference forward's logits of the whole stream, for every encoding, plain and
// with a Λ-mask and a distance cap, chunks and steps of sizes that do not divide each other; and
// the memory estimate decoding is refused by (models/decode_memory.hpp) counts the cache the
// model allocates, and stays constant with a Λ-mask and a cap.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/cpu/backend.hpp"
#include "models/decode_memory.hpp"
#include "models/model.hpp"
#include "models/positional_encodings.hpp"
#include "tests/support/decode_parity.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/whole_model.hpp"
#include "train/stream_eval.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

ModelConfig stream_config(PositionalEncoding pe) {
  ModelConfig c = decode_config(pe, 5);
  c.max_positions = 64;
  return c;
}

AttentionSpec lambda_and_cap() {
  AttentionSpec a;
  a.window.n_global = 1;
  a.window.n_local = 4;
  a.window.max_distance = 3;
  return a;
}

}  // namespace

TEST_CASE("a stream's cross-entropy per chunk is the full forward's, plain and with a Λ-mask") {
  for (PositionalEncoding pe : kAllPe)
    for (const AttentionSpec& attention : {AttentionSpec{}, lambda_and_cap()}) {
      INFO(positional_encoding_name(pe) << (attention.window.n_local > 0 ? ", Λ-mask + cap" : ""));
      const ModelConfig c = stream_config(pe);
      DModel model(c);
      model.init(3);
      std::vector<int> tokens(40);
      for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = static_cast<int>((i * 3 + i / 7) % c.vocab_size);
      // The brute force: the whole stream in one forward, every row's logits, the CE of the next
      // token by position.
      const Batch full = reading_every_row({tokens});
      DPacked in;
      in.pack({&full}, c, {&attention});
      model.infer(in);
      const std::vector<double> logits = model.download_token_logits(in);
      std::vector<double> nll(tokens.size(), 0);  // nll[p]: the token at p, from row p − 1
      for (size_t p = 1; p < tokens.size(); ++p) {
        const double* row = logits.data() + (p - 1) * c.vocab_size;
        double sum = 0;
        for (int v = 0; v < c.vocab_size; ++v) sum += std::exp(row[v]);
        nll[p] = std::log(sum) - row[tokens[p]];
      }
      StreamJob job;
      job.tokens = &tokens;
      job.n_tokens = 38;  // positions 1..37 scored
      job.chunk = 10;
      job.feed = 4;  // steps of 4, 4, 2 in each chunk of 10
      job.attention = attention;
      std::vector<StreamChunk> chunks;
      stream_cross_entropy(model, job, [&](const StreamChunk& ch) { chunks.push_back(ch); });
      REQUIRE(chunks.size() == 4);
      for (size_t i = 0; i < chunks.size(); ++i) {
        const StreamChunk& ch = chunks[i];
        CHECK(ch.first_position == static_cast<int64_t>(10 * i + 1));
        CHECK(ch.last_position == std::min<int64_t>(10 * (i + 1), 37));
        CHECK(ch.tokens == ch.last_position - ch.first_position + 1);
        double want = 0;
        for (int64_t p = ch.first_position; p <= ch.last_position; ++p) want += nll[p];
        CHECK(ch.nll_sum == doctest::Approx(want).epsilon(1e-12));
        // Every position's row (38), or with a Λ-mask n_global + 2·n_local (9) however long the
        // stream: 2 layers of [q|k|v] (3·8 numbers) and a position each.
        const size_t rows = attention.window.n_local > 0 ? 9 : 38;
        CHECK(ch.cache_bytes == rows * (2 * 3 * 8 * sizeof(double) + sizeof(int)));
      }
    }
}

TEST_CASE("a stream refuses too few tokens, more than it holds, and an empty chunk") {
  DModel model(stream_config(PositionalEncoding::kRope));
  model.init(1);
  const std::vector<int> tokens = {0, 1, 2, 3};
  const auto run = [&](int64_t n, int chunk) {
    StreamJob job;
    job.tokens = &tokens;
    job.n_tokens = n;
    job.chunk = chunk;
    stream_cross_entropy(model, job, [](const StreamChunk&) {});
  };
  CHECK_THROWS_AS(run(1, 4), std::invalid_argument);
  CHECK_THROWS_AS(run(5, 4), std::invalid_argument);
  CHECK_THROWS_AS(run(4, 0), std::invalid_argument);
  CHECK_NOTHROW(run(4, 4));
}

TEST_CASE("decode_memory counts the cache decoding allocates, and a Λ-mask with a cap bounds all") {
  for (PositionalEncoding pe : kAllPe)
    for (const AttentionSpec& attention : {AttentionSpec{}, lambda_and_cap()}) {
      INFO(positional_encoding_name(pe) << (attention.window.n_local > 0 ? ", Λ-mask + cap" : ""));
      ModelConfig c = stream_config(pe);
      for (const int capacity : {5, 30}) {
        DModel model(c);
        model.init(2);
        const DecodeCache<CpuBackend<double>> cache = model.begin_decode(1, capacity, attention);
        CHECK(decode_memory(c, attention, capacity, sizeof(double)).cache_bytes ==
              static_cast<double>(cache.bytes()));
      }
      const PositionalEncodingInfo& info = positional_encoding_info(pe);
      const DecodeMemory short_stream = decode_memory(c, attention, 1000, sizeof(float));
      const DecodeMemory long_stream = decode_memory(c, attention, 1000000, sizeof(float));
      const bool bounded = attention.window.n_local > 0 &&
                           !(info.absolute() && !info.learned_table()) &&
                           !(info.math && info.math->by_query_position);
      INFO("1 000 positions: " << short_stream.total()
                               << " bytes; 1 000 000: " << long_stream.total());
      // Constant only with a Λ-mask and a cap, and no table by absolute or query position.
      CHECK((long_stream.total() == short_stream.total()) == bounded);
      if (info.rotary() || info.distance_bias())
        CHECK((long_stream.tables_bytes == short_stream.tables_bytes) ==
              (attention.window.max_distance > 0 && !(info.math && info.math->by_query_position)));
    }
}
