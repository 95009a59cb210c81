// Drawing the token tasks' sequences into packed batches with their answer rows.
#include "tasks/token_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/chomsky_tasks.hpp"

namespace lenlab {
namespace {

// The content symbols of a task whose alphabet is fixed (or set by the modulus), 0 for one sized
// by n_symbols.
int fixed_alphabet(TaskKind task, const TokenTaskSettings& settings) {
  if (task == TaskKind::kText) return open_corpus(settings.corpus)->n_symbols();
  if (is_chomsky_task(task))
    return chomsky_uses_n_symbols(task) ? 0 : chomsky_content_symbols(task, settings);
  return task == TaskKind::kParity ? 2 : 0;  // the bits
}

void require_token_task(TaskKind task, const char* function) {
  if (!is_token_task(task)) {
    throw std::logic_error(std::string(function) + ": '" + task_name(task) +
                           "' is not a token task");
  }
}

void require_chain(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain) {
  if (task != TaskKind::kMarkov) return;
  if (chain == nullptr || chain->n_symbols() != settings.n_symbols ||
      chain->order() != settings.markov_order) {
    throw std::logic_error("markov batches need the MarkovChain built from their settings");
  }
}

int64_t sequence_tokens(TaskKind task, const TokenTaskSettings& settings, int length) {
  if (is_chomsky_task(task)) return chomsky_sequence_tokens(task, length);
  const int64_t l = length;
  switch (task) {
    case TaskKind::kPasskey:
      return l + 2 + settings.key_length;
    case TaskKind::kRecall:
      return 2 * l + 4;
    case TaskKind::kCopy:
    case TaskKind::kReverse:
      return 2 * l + 2;
    case TaskKind::kParity:
      return l + 3;
    case TaskKind::kMarkov:
    case TaskKind::kText:
      return l + 1;
    default:
      break;
  }
  throw std::logic_error("sequence_tokens: not a token task");
}

// What every draw of a batch shares, looked up once per batch (text's corpus lookup is a file
// status and a lock): the content symbols and special tokens, markov's chain, text's corpus and
// the split its windows come from.
struct TokenSource {
  int n_symbols = 0;
  SpecialTokens special{};
  const MarkovChain* chain = nullptr;
  std::shared_ptr<const TextCorpus> corpus;
  CorpusSplit split = CorpusSplit::kTrain;
};

TokenSource token_source(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                         CorpusSplit split) {
  TokenSource source{token_content_symbols(task, settings), special_tokens(task, settings), chain,
                     nullptr, split};
  if (task == TaskKind::kText) source.corpus = open_corpus(settings.corpus);
  return source;
}

// Draws a sequence of length L into `seq`. passkey_fill: the fill tokens before MARK, or −1 for a
// uniformly random number.
void draw_sequence(TaskKind task, const TokenTaskSettings& settings, const TokenSource& source,
                   int length, int passkey_fill, Rng& rng, TokenSequence& seq) {
  const int n = source.n_symbols;
  const SpecialTokens special = source.special;
  auto symbol = [&] { return static_cast<int32_t>(rng.uniform_int(0, n - 1)); };
  std::vector<int32_t>& t = seq.tokens;
  t.clear();
  t.push_back(special.bos);
  if (is_chomsky_task(task)) {
    draw_chomsky_sequence(task, settings, special, length, rng, seq);
    return;
  }
  switch (task) {
    case TaskKind::kPasskey: {
      const int k = settings.key_length;
      const int free = length - k - 1;  // fill tokens in all
      const int a = passkey_fill >= 0 ? passkey_fill : static_cast<int>(rng.uniform_int(0, free));
      t.insert(t.end(), a, special.fill);
      t.push_back(special.mark);
      const size_t key_begin = t.size();
      for (int i = 0; i < k; ++i) t.push_back(symbol());
      t.insert(t.end(), free - a, special.fill);
      seq.first = static_cast<int>(t.size());
      t.push_back(special.sep);
      for (int i = 0; i < k; ++i) t.push_back(t[key_begin + i]);
      seq.count = k;
      return;
    }
    case TaskKind::kRecall: {
      // Distinct keys: a partial Fisher-Yates shuffle of 0..n−1.
      std::vector<int32_t>& keys = seq.scratch;
      keys.resize(n);
      std::iota(keys.begin(), keys.end(), 0);
      for (int i = 0; i < length; ++i) {
        std::swap(keys[i], keys[static_cast<size_t>(rng.uniform_int(i, n - 1))]);
      }
      for (int i = 0; i < length; ++i) {
        t.push_back(keys[i]);
        t.push_back(symbol());
      }
      const int q = static_cast<int>(rng.uniform_int(1, length));
      t.push_back(special.sep);
      seq.first = static_cast<int>(t.size());
      t.push_back(t[2 * q - 1]);  // k_q
      t.push_back(t[2 * q]);      // v_q
      seq.count = 1;
      return;
    }
    case TaskKind::kCopy:
    case TaskKind::kReverse: {
      for (int i = 0; i < length; ++i) t.push_back(symbol());
      seq.first = static_cast<int>(t.size());
      t.push_back(special.sep);
      for (int i = 0; i < length; ++i) {
        t.push_back(t[task == TaskKind::kCopy ? 1 + i : length - i]);
      }
      seq.count = length;
      return;
    }
    case TaskKind::kParity: {
      int32_t parity = 0;
      for (int i = 0; i < length; ++i) {
        const int32_t b = rng.bit() ? 1 : 0;
        t.push_back(b);
        parity ^= b;
      }
      end_with_answer(special.sep, parity, seq);
      return;
    }
    case TaskKind::kMarkov: {
      // x_t sits at row t; the first `order` symbols are iid uniform, the rest follow the chain.
      source.chain->append_sample(t, length, rng);
      seq.first = 0;
      seq.count = length;
      return;
    }
    case TaskKind::kText: {
      // x_t sits at row t: a window of the corpus's split.
      source.corpus->append_window(source.split, length, rng, t);
      seq.first = 0;
      seq.count = length;
      return;
    }
    default:
      break;
  }
  throw std::logic_error("draw_sequence: not a token task");
}

// Appends `seq` at positions 0, 1, … with its answer rows, each weighted 1/(n_seq · count).
void append_token_sequence(const TokenSequence& seq, int n_seq, Batch& batch) {
  const int32_t base = batch.offsets.back();
  append_tokens(batch, seq.tokens);
  const double w = 1.0 / (static_cast<double>(n_seq) * static_cast<double>(seq.count));
  for (int i = 0; i < seq.count; ++i) {
    const int row = seq.first + i;
    batch.token.rows.push_back(base + row);
    batch.token.labels.push_back(seq.tokens[row + 1]);
    batch.token.weights.push_back(w);
  }
}

}  // namespace

int64_t token_sequence_tokens(TaskKind task, const TokenTaskSettings& settings, int length) {
  require_token_task(task, "token_sequence_tokens");
  return sequence_tokens(task, settings, length);
}

int token_answer_rows(TaskKind task, const TokenTaskSettings& settings, int length) {
  if (is_chomsky_task(task)) return chomsky_answer_rows(task, length);
  switch (task) {
    case TaskKind::kPasskey:
      return settings.key_length;
    case TaskKind::kRecall:
    case TaskKind::kParity:
      return 1;
    case TaskKind::kCopy:
    case TaskKind::kReverse:
    case TaskKind::kMarkov:
    case TaskKind::kText:
      return length;
    default:  // the scalar tasks
      break;
  }
  throw std::logic_error("token_answer_rows: not a token task");
}

int shortest_length(TaskKind task, const TokenTaskSettings& settings) {
  if (task == TaskKind::kPasskey)  // key_length + 1, held in int whatever key_length is
    return static_cast<int>(std::clamp<int64_t>(int64_t{settings.key_length} + 1, 1, INT32_MAX));
  return is_chomsky_task(task) ? chomsky_shortest_length(task) : 1;
}

int token_content_symbols(TaskKind task, const TokenTaskSettings& settings) {
  require_token_task(task, "token_content_symbols");
  const int fixed = fixed_alphabet(task, settings);
  return fixed > 0 ? fixed : settings.n_symbols;
}

int token_vocab_size(TaskKind task, const TokenTaskSettings& settings) {
  return token_content_symbols(task, settings) + (task == TaskKind::kText ? 1 : 4);
}

SpecialTokens special_tokens(TaskKind task, const TokenTaskSettings& settings) {
  const int n = token_content_symbols(task, settings);
  if (task == TaskKind::kText) return {n, -1, -1, -1};  // BOS alone: no token is one of the others
  return {n, n + 1, n + 2, n + 3};
}

void check_token_task(TaskKind task, const TokenTaskSettings& settings, int l_min, int l_max) {
  require_token_task(task, "check_token_task");
  if (l_min < 1) throw UsageError(fmt::format("lengths must be >= 1, got {}", l_min));
  if (l_min > l_max) {
    throw UsageError(fmt::format("empty length range {}..{}", l_min, l_max));
  }
  const int n = settings.n_symbols;
  if (fixed_alphabet(task, settings) == 0 && (n < 2 || n > 4096)) {  // the modulus is checked too
    throw UsageError(fmt::format("--n-symbols (n_symbols) must be in 2..4096, got {}", n));
  }
  if (task == TaskKind::kPasskey && settings.key_length < 1)
    throw UsageError(
        fmt::format("--key-length (key_length) must be >= 1, got {}", settings.key_length));
  const int shortest = shortest_length(task, settings);
  if (l_min < shortest) {
    if (task == TaskKind::kPasskey)
      throw UsageError(fmt::format(
          "a passkey of {} symbols (--key-length, key_length) needs length >= {}, got {}",
          settings.key_length, shortest, l_min));
    throw UsageError(fmt::format("task '{}' needs length >= {} ({}), got {}", task_name(task),
                                 shortest,
                                 task == TaskKind::kSolveEquation ? "the shortest equation is x = v"
                                 : task == TaskKind::kMissingDuplicateString
                                     ? "a string of one bit and its copy"
                                     : "two numbers of one bit and the operator between them",
                                 l_min));
  }
  switch (task) {
    case TaskKind::kRecall:
      if (l_max > n) {
        throw UsageError(fmt::format(
            "--n-symbols (n_symbols) {} is a vocabulary too small for the task: recall at length "
            "{} needs {} distinct keys (recall lengths must be <= n_symbols)",
            n, l_max, l_max));
      }
      break;
    case TaskKind::kMarkov:
      check_markov_settings(n, settings.markov_order, settings.markov_concentration);
      break;
    case TaskKind::kText: {
      const auto corpus = open_corpus(settings.corpus);
      corpus->check_window(CorpusSplit::kTrain, l_max);
      corpus->check_window(CorpusSplit::kTest, l_max);
      break;
    }
    default:
      break;
  }
}

void check_depth(double depth) {
  if (!(depth >= 0.0 && depth <= 1.0)) {
    throw UsageError(fmt::format("--depths: a depth must be in [0, 1], got {}", depth));
  }
}

Batch token_train_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                        int l_train, int n_seq, Rng& rng, int l_min) {
  require_token_task(task, "token_train_batch");
  if (l_train < 1) {
    throw UsageError(fmt::format("training length must be >= 1 (got {})", l_train));
  }
  if (n_seq < 1) throw UsageError(fmt::format("sequences per batch must be >= 1 (got {})", n_seq));
  int l_lo = shortest_length(task, settings), l_hi = std::max(l_lo, l_train);
  if (l_min > 0) {
    if (l_min < l_lo || l_min > l_hi)
      throw UsageError(
          fmt::format("the shortest training length must be in {}..{}, got {}", l_lo, l_hi, l_min));
    l_lo = l_min;
  }
  check_token_task(task, settings, l_lo, l_hi);
  require_chain(task, settings, chain);
  check_batch_size(int64_t{n_seq} * sequence_tokens(task, settings, l_hi), n_seq, l_hi);
  Batch batch;
  batch.offsets.reserve(n_seq + 1);
  batch.offsets.push_back(0);
  const TokenSource source = token_source(task, settings, chain, CorpusSplit::kTrain);
  TokenSequence seq;
  for (int s = 0; s < n_seq; ++s) {
    const int length = static_cast<int>(rng.uniform_int(l_lo, l_hi));
    draw_sequence(task, settings, source, length, -1, rng, seq);
    append_token_sequence(seq, n_seq, batch);
  }
  return batch;
}

Batch token_eval_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                       int length, int n_samples, uint64_t eval_seed, double depth) {
  require_token_task(task, "token_eval_batch");
  if (n_samples < 1) {
    throw UsageError(fmt::format("evaluation samples must be >= 1 (got {})", n_samples));
  }
  const bool fixed_depth = task == TaskKind::kPasskey && !(depth < 0.0);  // NaN is checked
  if (fixed_depth) check_depth(depth);
  check_token_task(task, settings, length, length);
  require_chain(task, settings, chain);
  check_batch_size(int64_t{n_samples} * sequence_tokens(task, settings, length), n_samples, length);
  uint64_t seed = eval_seed;
  int passkey_fill = -1;
  if (fixed_depth) {
    if (depth == 0.0) depth = 0.0;  // −0 and +0 are one cell
    uint64_t bits = 0;
    std::memcpy(&bits, &depth, sizeof bits);
    seed ^= Rng(bits).next_u64();  // the depth's own stream: its bits hashed by the RNG
    passkey_fill = static_cast<int>(std::lround(depth * (length - settings.key_length - 1)));
  }
  Rng rng = Rng::stream(seed, static_cast<uint64_t>(length));
  Batch batch;
  batch.tokens.reserve(static_cast<size_t>(n_samples) * sequence_tokens(task, settings, length));
  batch.positions.reserve(batch.tokens.capacity());
  batch.offsets.reserve(n_samples + 1);
  batch.offsets.push_back(0);
  const TokenSource source = token_source(task, settings, chain, CorpusSplit::kTest);
  TokenSequence seq;
  for (int s = 0; s < n_samples; ++s) {
    draw_sequence(task, settings, source, length, passkey_fill, rng, seq);
    append_token_sequence(seq, n_samples, batch);
  }
  return batch;
}

std::vector<int32_t> token_readout_offsets(const Batch& batch) {
  const int n_seq = batch.n_seq();
  std::vector<int32_t> out(n_seq + 1, 0);
  int s = 0;
  for (int r = 0; r < batch.token.size(); ++r) {
    const int32_t row = batch.token.rows[r];
    if (row < 0 || row >= batch.n_tokens()) {
      throw std::logic_error("token_readout_offsets: readout row outside the batch");
    }
    while (row >= batch.offsets[s + 1]) out[++s] = r;
    if (row < batch.offsets[s]) {
      throw std::logic_error("token_readout_offsets: readout rows not in sequence order");
    }
  }
  while (s < n_seq) out[++s] = batch.token.size();
  return out;
}

}  // namespace lenlab
