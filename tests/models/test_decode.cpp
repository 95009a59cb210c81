// Incremental decoding on the CPU (models/model_decode.hpp): for every encoding and every
// test-time setting, the logits of each position decoded from the cache equal the full inference
// forward's, in double to 1e-12 and in float to 1e-5 of their largest magnitude; K models at once;
// bad input refused. The same check on the GPU: tests/cuda/test_cuda_model.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/positional_encodings.hpp"
#include "tests/support/decode_parity.hpp"
#include "tests/support/small_model.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/whole_model.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

template <class T>
void check_every_encoding_and_setting(double rel) {
  for (PositionalEncoding pe : kAllPe)
    for (const DecodeSetting& setting : decode_settings()) {
      INFO(positional_encoding_name(pe) << ", " << setting.name);
      Model<CpuBackend<T>> model(decode_config(pe));
      model.init(11);
      check_decode_parity(model, setting.attention, rel);
    }
}

}  // namespace

TEST_CASE("decoding from the cache gives the full forward's logits, in double") {
  check_every_encoding_and_setting<double>(1e-12);
}

TEST_CASE("decoding from the cache gives the full forward's logits, in float") {
  check_every_encoding_and_setting<float>(1e-5);
}

TEST_CASE("K models decode at once, each as it decodes alone") {
  const ModelConfig c = decode_config(PositionalEncoding::kRope);
  DModel both(c, 2);
  both.init(0, 3);
  both.init(1, 4);
  DecodeCache<CpuBackend<double>> cache = both.begin_decode(1, 5);
  // Model 0 appends three tokens, model 1 one: padding rows between them.
  const std::vector<double> got = both.decode(cache, {{1, 2, 3}, {4}}, /*every_row=*/true);
  for (int k = 0; k < 2; ++k) {
    DModel one(c);
    one.init(3 + k);
    DecodeCache<CpuBackend<double>> alone = one.begin_decode(1, 5);
    const std::vector<double> want =
        one.decode(alone, {k == 0 ? std::vector<int>{1, 2, 3} : std::vector<int>{4}}, true);
    const std::vector<double> mine(got.begin() + k * 3 * c.vocab_size,
                                   got.begin() + k * 3 * c.vocab_size + want.size());
    check_close_to_largest(mine, want, 1e-13);
  }
}

TEST_CASE("decoding refuses tokens outside the vocabulary and caches past a learned table") {
  const ModelConfig c = decode_config(PositionalEncoding::kLearned);
  DModel model(c);
  model.init(1);
  DecodeCache<CpuBackend<double>> cache = model.begin_decode(1, 4);
  const std::string bad = usage_message([&] { model.decode(cache, {{1, 9}}); });
  CHECK(contains(bad, "token id 9"));
  CHECK(contains(bad, "offset 1"));
  CHECK(cache.filled[0] == 0);  // nothing appended
  CHECK(contains(usage_message([&] { model.begin_decode(1, c.max_positions + 1); }),
                 "learned position table"));
  CHECK(contains(usage_message([&] { model.begin_decode(0, 4); }), "at least one sequence"));
}

TEST_CASE("decoding at given positions gives the full forward's logits at those positions") {
  // Randomized positions' test sequences: sorted, gapped, repeated ones included.
  const std::vector<int> tokens = {4, 1, 0, 5, 2, 2, 3}, at = {0, 3, 4, 4, 9, 12, 13};
  for (PositionalEncoding pe : kAllPe) {
    INFO(positional_encoding_name(pe));
    ModelConfig c = decode_config(pe);
    c.max_positions = 16;
    DModel model(c);
    model.init(2);
    Batch full = reading_every_row({tokens});
    full.positions.assign(at.begin(), at.end());
    DPacked in;
    in.pack({&full}, c);
    model.infer(in);
    const std::vector<double> want = model.download_token_logits(in);
    DecodeCache<CpuBackend<double>> cache = model.begin_decode(DecodeSetup{1, 7, 13, {}, {}});
    std::vector<double> got;
    for (size_t i = 0; i < tokens.size(); i += 3) {  // 3, 3, then 1 at a time
      const size_t end = std::min(tokens.size(), i + 3);
      const std::vector<std::vector<int>> step = {{tokens.begin() + i, tokens.begin() + end}};
      const std::vector<std::vector<int>> where = {{at.begin() + i, at.begin() + end}};
      const std::vector<double> part = model.decode(cache, step, true, &where);
      got.insert(got.end(), part.begin(), part.end());
    }
    check_close_to_largest(got, want, 1e-12);
    // A position below the last one, or past the setup's largest, is refused.
    DecodeCache<CpuBackend<double>> again = model.begin_decode(DecodeSetup{1, 7, 13, {}, {}});
    const std::vector<std::vector<int>> two = {{1, 2}};
    const std::vector<std::vector<int>> backwards = {{5, 4}}, far = {{5, 14}};
    CHECK(contains(usage_message([&] { model.decode(again, two, false, &backwards); }),
                   "position 4"));
    CHECK(contains(usage_message([&] { model.decode(again, two, false, &far); }),
                   "at most the cache's largest, 13"));
    CHECK(again.filled[0] == 0);
  }
}

TEST_CASE("a Λ-mask's cache holds its first n_global and 2·n_local rows however long the stream") {
  for (PositionalEncoding pe : kAllPe) {
    INFO(positional_encoding_name(pe));
    ModelConfig c = decode_config(pe);
    c.max_positions = 128;
    DModel model(c);
    model.init(6);
    AttentionSpec lambda;
    lambda.window.n_global = 2;
    lambda.window.n_local = 4;
    std::vector<int> tokens(100);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7 + i / 5) % 6);
    const Batch full = reading_every_row({tokens});
    DPacked in;
    in.pack({&full}, c, {&lambda});
    model.infer(in);
    const std::vector<double> want = model.download_token_logits(in);
    DecodeCache<CpuBackend<double>> cache = model.begin_decode(1, 100, lambda);
    CHECK(cache.slot == 2 + 2 * 4);
    CHECK(cache.bytes() == 10 * (2 * 3 * 8 * sizeof(double) + sizeof(int)));
    // A 7-token prompt (past the slot's 10 rows once the stream grows), then one at a time.
    std::vector<double> got = model.decode(cache, {{tokens.begin(), tokens.begin() + 7}}, true);
    for (size_t i = 7; i < tokens.size(); ++i) {
      const std::vector<double> one = model.decode(cache, {{tokens[i]}});
      got.insert(got.end(), one.begin(), one.end());
    }
    check_close_to_largest(got, want, 1e-12);
    CHECK(cache.used[0] <= cache.slot);
    CHECK(cache.filled[0] == 100);
  }
}

TEST_CASE("a forward between two decoding steps leaves the cache's tables right") {
  // The forward in between prepares tables for 3 positions (a learned bias's from the
  // parameters, FIRE's per query position): the cache must not go on with them.
  const std::vector<int> tokens = {1, 4, 0, 2, 5, 3, 3, 1, 0};
  for (PositionalEncoding pe : kAllPe) {
    INFO(positional_encoding_name(pe));
    DModel model(decode_config(pe));
    model.init(12);
    const Batch full = reading_every_row({tokens});
    DPacked in;
    in.pack({&full}, model.config());
    model.infer(in);
    const std::vector<double> want = model.download_token_logits(in);
    DecodeCache<CpuBackend<double>> cache = model.begin_decode(1, 9);
    std::vector<double> got = model.decode(cache, {{tokens.begin(), tokens.begin() + 5}}, true);
    const Batch small = reading_every_row({{2, 2, 1}});
    DPacked other;
    other.pack({&small}, model.config());
    model.infer(other);
    const std::vector<double> rest =
        model.decode(cache, {{tokens.begin() + 5, tokens.end()}}, true);
    got.insert(got.end(), rest.begin(), rest.end());
    check_close_to_largest(got, want, 1e-12);
  }
}
