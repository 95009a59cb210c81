// Drawing and enumerating task sequences into packed batches.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/scalar_tasks.hpp"
#include "tasks/task.hpp"

namespace lenlab {
namespace {

// Fills bits[0..length) with the task's distribution. bits is resized, not reallocated when large
// enough, so a caller drawing many sequences reuses one buffer.
void draw_bits(TaskKind task, int length, Rng& rng, std::vector<int32_t>& bits) {
  bits.resize(length);
  if (task_info(task).scalar->uniform_count) {
    // #ones uniform in 0..l, then a Fisher-Yates shuffle puts them at uniformly random positions.
    const int n_ones = static_cast<int>(rng.uniform_int(0, length));
    for (int i = 0; i < length; ++i) bits[i] = i < n_ones ? kOne : kZero;
    for (int i = length - 1; i > 0; --i) {
      std::swap(bits[i], bits[static_cast<int>(rng.uniform_int(0, i))]);
    }
    return;
  }
  // Independent fair bits, 64 per draw (every bit of xoshiro256** output is usable).
  uint64_t word = 0;
  for (int i = 0; i < length; ++i) {
    if (i % 64 == 0) word = rng.next_u64();
    bits[i] = static_cast<int32_t>((word >> (i % 64)) & 1);
  }
}

// Appends [BOS, bits.., EOS] and its target (read at the EOS row).
void append_task_sequence(TaskKind task, const std::vector<int32_t>& bits, Batch& batch,
                          std::vector<int32_t>& scratch) {
  int n_ones = 0;
  scratch.clear();
  scratch.push_back(kBos);
  for (const int32_t b : bits) {
    scratch.push_back(b);
    n_ones += b;
  }
  scratch.push_back(kEos);
  append_sequence(batch, scratch, task_target(task, static_cast<int>(bits.size()), n_ones));
}

void require_scalar(TaskKind task, const char* function) {
  if (!task_info(task).scalar)
    throw std::logic_error(std::string(function) + ": '" + task_name(task) +
                           "' is not a scalar task");
}

void check_length(int length, const char* what) {
  if (length < 1) throw UsageError(fmt::format("{} must be >= 1 (got {})", what, length));
}

uint64_t binomial(int n, int k) {
  // Exact for the n <= 30 that enumeration allows: every partial product C(n, i) fits.
  uint64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * static_cast<uint64_t>(n - k + i) / static_cast<uint64_t>(i);
  return c;
}

}  // namespace

bool eval_enumerates(int length, int n_samples) {
  return length >= 1 && length < 63 && (uint64_t{1} << length) <= static_cast<uint64_t>(n_samples);
}

Batch sample_train_batch(TaskKind task, int l_train, int n_seq, Rng& rng, int l_min) {
  require_scalar(task, "sample_train_batch");
  check_length(l_train, "training length");
  if (l_min < 1 || l_min > l_train)
    throw UsageError(
        fmt::format("the shortest training length must be in 1..{}, got {}", l_train, l_min));
  if (n_seq < 1) throw UsageError(fmt::format("sequences per batch must be >= 1 (got {})", n_seq));
  check_batch_size(int64_t{n_seq} * (int64_t{l_train} + 2), n_seq, l_train);
  Batch batch;
  batch.offsets.reserve(n_seq + 1);
  batch.targets.reserve(n_seq);
  batch.read_rows.reserve(n_seq);
  batch.offsets.push_back(0);
  std::vector<int32_t> bits, tokens;
  for (int s = 0; s < n_seq; ++s) {
    const int length = static_cast<int>(rng.uniform_int(l_min, l_train));
    draw_bits(task, length, rng, bits);
    append_task_sequence(task, bits, batch, tokens);
  }
  return batch;
}

Batch eval_batch(TaskKind task, int length, int n_samples, uint64_t eval_seed) {
  require_scalar(task, "eval_batch");
  check_length(length, "evaluation length");
  if (n_samples < 1) {
    throw UsageError(fmt::format("evaluation samples must be >= 1 (got {})", n_samples));
  }
  const bool enumerate = eval_enumerates(length, n_samples);
  const int n_seq = enumerate ? 1 << length : n_samples;  // 2^length <= n_samples fits an int
  check_batch_size(int64_t{n_seq} * (int64_t{length} + 2), n_seq, length);
  Batch batch;
  batch.tokens.reserve(static_cast<size_t>(n_seq) * (length + 2));
  batch.offsets.reserve(n_seq + 1);
  batch.targets.reserve(n_seq);
  batch.read_rows.reserve(n_seq);
  batch.offsets.push_back(0);
  std::vector<int32_t> bits(length), tokens;
  if (enumerate) {
    const uint64_t count = uint64_t{1} << length;
    const double uniform_weight = 1.0 / static_cast<double>(count);
    batch.weights.reserve(n_seq);
    for (uint64_t i = 0; i < count; ++i) {
      int n_ones = 0;
      for (int j = 0; j < length; ++j) {
        bits[j] = static_cast<int32_t>((i >> j) & 1);
        n_ones += bits[j];
      }
      append_task_sequence(task, bits, batch, tokens);
      // A uniform count (mean-uniform): P(k ones) = 1/(l+1), spread evenly over the C(l, k)
      // arrangements.
      batch.weights.push_back(task_info(task).scalar->uniform_count
                                  ? 1.0 / (static_cast<double>(length + 1) *
                                           static_cast<double>(binomial(length, n_ones)))
                                  : uniform_weight);
    }
    return batch;
  }
  Rng rng = Rng::stream(eval_seed, static_cast<uint64_t>(length));
  for (int s = 0; s < n_samples; ++s) {
    draw_bits(task, length, rng, bits);
    append_task_sequence(task, bits, batch, tokens);
  }
  return batch;
}

Batch slice_batch(const Batch& b, int begin, int end) {
  Batch out;
  const int t0 = b.offsets[begin], t1 = b.offsets[end];
  out.tokens.assign(b.tokens.begin() + t0, b.tokens.begin() + t1);
  out.positions.assign(b.positions.begin() + t0, b.positions.begin() + t1);
  for (int s = begin; s <= end; ++s) out.offsets.push_back(b.offsets[s] - t0);
  for (int r = 0; r < b.n_read(); ++r)
    if (b.read_rows[r] >= t0 && b.read_rows[r] < t1) {
      out.read_rows.push_back(b.read_rows[r] - t0);
      out.targets.push_back(b.targets[r]);
      if (!b.weights.empty()) out.weights.push_back(b.weights[r]);
    }
  std::vector<int32_t> renumbered(b.token.size(), -1);  // readout r's index in the slice
  for (int r = 0; r < b.token.size(); ++r)
    if (b.token.rows[r] >= t0 && b.token.rows[r] < t1) {
      renumbered[r] = out.token.size();
      out.token.rows.push_back(b.token.rows[r] - t0);
      out.token.labels.push_back(b.token.labels[r]);
      out.token.weights.push_back(b.token.weights[r]);
    }
  const ReadoutPairs& pairs = b.token.pairs;
  for (int p = 0; p < pairs.size(); ++p) {  // the pairs with both rows in the slice
    const int32_t first = renumbered[pairs.first[p]], second = renumbered[pairs.second[p]];
    if (first < 0 || second < 0) continue;
    out.token.pairs.first.push_back(first);
    out.token.pairs.second.push_back(second);
    out.token.pairs.weights.push_back(pairs.weights[p]);
    out.token.pairs.entropy_weights.push_back(pairs.entropy_weights[p]);
  }
  for (const auto& [from, to] :
       {std::pair{&b.detached, &out.detached}, std::pair{&b.prefix_noise, &out.prefix_noise}})
    if (!from->empty()) to->assign(from->begin() + t0, from->begin() + t1);
  out.noise_seed = b.noise_seed;
  return out;
}

}  // namespace lenlab
