// What a training step replayed as a CUDA graph rests on, checked without a GPU: the setting's
// parsing (models/step_capture.hpp), the batch's shape key (PackedBatch::shape_key), which must
// tell apart any two batches whose steps launch differently, and the one copy that uploads a
// batch (models/staged_upload.hpp). The replay itself is checked on a GPU
// (tests/cuda/test_cuda_training.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/cpu/backend.hpp"
#include "models/packed_batch.hpp"
#include "models/staged_upload.hpp"
#include "models/step_capture.hpp"
#include "tasks/task.hpp"
#include "tests/support/small_model.hpp"

using namespace lenlab;
using namespace lenlab::test;

TEST_CASE(
    "LENLAB_CUDA_GRAPHS: off unless 1, and another value, or 1 with LENLAB_CUDA_SYNC=1, "
    "refused by name") {
  CHECK_FALSE(parse_cuda_graphs_setting(nullptr, nullptr));
  CHECK_FALSE(parse_cuda_graphs_setting("", nullptr));
  CHECK_FALSE(parse_cuda_graphs_setting("0", "1"));
  CHECK(parse_cuda_graphs_setting("1", nullptr));
  CHECK(parse_cuda_graphs_setting("1", "0"));
  try {
    parse_cuda_graphs_setting("yes", nullptr);
    FAIL("accepted LENLAB_CUDA_GRAPHS=yes");
  } catch (const UsageError& e) {
    const std::string m = e.what();
    CHECK(m.find("'yes'") != std::string::npos);
    CHECK(m.find("'1'") != std::string::npos);
    CHECK(m.find("'0'") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(parse_cuda_graphs_setting("1", "1"), doctest::Contains("LENLAB_CUDA_SYNC"),
                       UsageError);
}

TEST_CASE(
    "a batch's shape key: the same for batches of the same sizes, another for each size or "
    "switch a training step's launches depend on") {
  const ModelConfig c = small_config(PositionalEncoding::kNope);
  auto key_of = [&](const std::vector<const Batch*>& batches) {
    PackedBatch<CpuBackend<float>> packed;
    packed.pack(batches, c);
    return packed.shape_key();
  };
  // Two batches of one length (l_min = l_train) but other draws: other tokens, the same sizes.
  Rng rng(5);
  const Batch a = sample_train_batch(TaskKind::kSum, 6, 4, rng, 6);
  const Batch b = sample_train_batch(TaskKind::kSum, 6, 4, rng, 6);
  REQUIRE(a.tokens != b.tokens);
  CHECK(key_of({&a}) == key_of({&b}));

  const std::vector<int64_t> base = key_of({&a});
  const Batch longer = sample_train_batch(TaskKind::kSum, 7, 4, rng, 7);  // more rows, positions
  const Batch more = sample_train_batch(TaskKind::kSum, 6, 5, rng, 6);    // more sequences
  CHECK(key_of({&longer}) != base);
  CHECK(key_of({&more}) != base);
  CHECK(key_of({&a, &a}) != base);  // two models
  Batch noisy = a;                  // VCL's random prefix: another forward
  noisy.prefix_noise.assign(a.tokens.size(), ops::kPassRow);
  CHECK(key_of({&noisy}) != base);
  // The same rows read by a token head instead of the scalar head: another loss, another key.
  Batch token = a;
  token.token.rows = token.read_rows;
  token.token.labels.assign(token.read_rows.size(), 0);
  token.token.weights.assign(token.read_rows.size(), 1.0);
  token.read_rows.clear();
  token.targets.clear();
  ModelConfig ct = c;
  ct.token_head = true;
  ct.vocab_size = 4;
  PackedBatch<CpuBackend<float>> packed;
  packed.pack({&token}, ct);
  CHECK(packed.shape_key() != base);
}

TEST_CASE(
    "a staged upload: every part's values in one buffer, each on its own cache line, a "
    "skipped part null") {
  using B = CpuBackend<float>;
  B::Buffer<std::byte> storage;
  DevicePart<int> ints;
  DevicePart<double> doubles;
  DevicePart<float> floats, skipped;
  skipped.ptr = reinterpret_cast<float*>(&storage);  // anything: the upload must clear it
  const std::vector<int> i = {1, -2, 3};
  const std::vector<double> d = {0.5, 1e300};
  const std::vector<float> f = {2.5f};
  StagedUpload<B> staged;
  staged.add(ints, i);
  staged.add(doubles, d);
  staged.skip(skipped);
  staged.add(floats, f);
  staged.upload(storage);
  CHECK(std::vector<int>(ints.data(), ints.data() + 3) == i);
  CHECK(std::vector<double>(doubles.data(), doubles.data() + 2) == d);
  CHECK(floats.data()[0] == 2.5f);
  CHECK(skipped.data() == nullptr);
  const auto at = [&](const void* p) { return static_cast<const std::byte*>(p) - storage.data(); };
  CHECK(at(ints.data()) == 0);
  CHECK(at(doubles.data()) == 64);
  CHECK(at(floats.data()) == 128);
  CHECK(storage.size() == 128 + sizeof(float));

  // The next upload reuses the buffer, and a part it does not hold is null again.
  const std::byte* first = storage.data();
  StagedUpload<B> again;
  again.add(ints, std::vector<int>{7});
  again.skip(doubles);
  again.upload(storage);
  CHECK(storage.data() == first);
  CHECK(ints.data()[0] == 7);
  CHECK(doubles.data() == nullptr);
}
