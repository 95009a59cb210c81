// Drawing the token tasks' sequences into packed batches with their answer rows.
#include "tasks/token_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

// The study's fixed alphabets (tasks/regular/ of Delétang et al.'s code: docs/tasks.md).
constexpr int kModulus = 5;             // cycle-navigation's cycle, modular-arithmetic's mod
constexpr int32_t kModPlus = kModulus;  // modular-arithmetic's operators follow the digits
constexpr int32_t kModMinus = kModulus + 1;
constexpr int32_t kModTimes = kModulus + 2;

// The content symbols of a task whose alphabet is fixed, 0 for one sized by n_symbols.
int fixed_alphabet(TaskKind task) {
  switch (task) {
    case TaskKind::kParity:
    case TaskKind::kEvenPairs:
      return 2;  // the bits
    case TaskKind::kCycleNavigation:
      return kModulus;  // moves 0..2 and positions 0..4 share the symbols
    case TaskKind::kModularArithmetic:
      return kModTimes + 1;  // digits, then the operators
    default:
      return 0;
  }
}

// modular-arithmetic draws an odd number of tokens: L, or L − 1 for an even L (as the study does).
int expression_tokens(int length) {
  return length % 2 == 1 ? length : length - 1;
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
    case TaskKind::kEvenPairs:
    case TaskKind::kCycleNavigation:
      return l + 3;
    case TaskKind::kModularArithmetic:
      return expression_tokens(length) + 3;
    case TaskKind::kMarkov:
      return l + 1;
    default:
      break;
  }
  throw std::logic_error("sequence_tokens: not a token task");
}

// A value of a modular-arithmetic expression: digits 0..4 at even offsets, operators
// (kModPlus, kModMinus, kModTimes) between them; × binds first, as in the study: a − b is
// a + (−b), each +-separated term a product, the terms' sum taken mod 5 into 0..4.
int modular_value(const int32_t* expression, int n_tokens) {
  int sum = 0, term = expression[0];
  for (int i = 1; i + 1 < n_tokens; i += 2) {
    const int32_t op = expression[i], digit = expression[i + 1];
    if (op == kModTimes) {
      term = term * digit % kModulus;
    } else {
      sum = (sum + term) % kModulus;
      term = op == kModPlus ? digit : (kModulus - digit) % kModulus;
    }
  }
  return (sum + term) % kModulus;
}

// One sequence: its tokens, and its answer rows first .. first + count − 1 (every task's answer
// rows are contiguous).
struct Sequence {
  std::vector<int32_t> tokens;
  std::vector<int32_t> scratch;  // recall's key permutation
  int first = 0;
  int count = 0;
};

// Ends a one-answer sequence: SEP, whose row predicts the answer that follows it.
void end_with_answer(int32_t sep, int32_t answer, Sequence& seq) {
  seq.first = static_cast<int>(seq.tokens.size());
  seq.tokens.push_back(sep);
  seq.tokens.push_back(answer);
  seq.count = 1;
}

// Draws a sequence of length L into `seq`. passkey_fill: the fill tokens before MARK, or −1 for a
// uniformly random number.
void draw_sequence(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                   int length, int passkey_fill, Rng& rng, Sequence& seq) {
  const int n = token_content_symbols(task, settings);
  const SpecialTokens special = special_tokens(task, settings);
  auto symbol = [&] { return static_cast<int32_t>(rng.uniform_int(0, n - 1)); };
  std::vector<int32_t>& t = seq.tokens;
  t.clear();
  t.push_back(special.bos);
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
    case TaskKind::kEvenPairs: {
      int32_t changes = 0;
      for (int i = 0; i < length; ++i) {
        t.push_back(rng.bit() ? 1 : 0);
        if (i > 0) changes ^= t[i] != t[i + 1] ? 1 : 0;  // t[0] is BOS
      }
      end_with_answer(special.sep, changes, seq);
      return;
    }
    case TaskKind::kCycleNavigation: {
      int position = 0;
      for (int i = 0; i < length; ++i) {
        const int32_t move = static_cast<int32_t>(rng.uniform_int(0, 2));
        t.push_back(move);
        position = (position + move - 1 + kModulus) % kModulus;
      }
      end_with_answer(special.sep, position, seq);
      return;
    }
    case TaskKind::kModularArithmetic: {
      const int n_tokens = expression_tokens(length);
      for (int i = 0; i < n_tokens; ++i)
        t.push_back(static_cast<int32_t>(i % 2 == 0 ? rng.uniform_int(0, kModulus - 1)
                                                    : rng.uniform_int(kModPlus, kModTimes)));
      end_with_answer(special.sep, modular_value(t.data() + 1, n_tokens), seq);
      return;
    }
    case TaskKind::kMarkov: {
      // x_t sits at row t; the first `order` symbols are iid uniform, the rest follow the chain.
      chain->append_sample(t, length, rng);
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
void append_token_sequence(const Sequence& seq, int n_seq, Batch& batch) {
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
  switch (task) {
    case TaskKind::kPasskey:
      return settings.key_length;
    case TaskKind::kRecall:
    case TaskKind::kParity:
    case TaskKind::kEvenPairs:
    case TaskKind::kCycleNavigation:
    case TaskKind::kModularArithmetic:
      return 1;
    case TaskKind::kCopy:
    case TaskKind::kReverse:
    case TaskKind::kMarkov:
      return length;
    case TaskKind::kMean:
    case TaskKind::kLength:
    case TaskKind::kSum:
    case TaskKind::kMeanUniform:
      break;
  }
  throw std::logic_error("token_answer_rows: not a token task");
}

int token_content_symbols(TaskKind task, const TokenTaskSettings& settings) {
  require_token_task(task, "token_content_symbols");
  const int fixed = fixed_alphabet(task);
  return fixed > 0 ? fixed : settings.n_symbols;
}

int token_vocab_size(TaskKind task, const TokenTaskSettings& settings) {
  return token_content_symbols(task, settings) + 4;
}

SpecialTokens special_tokens(TaskKind task, const TokenTaskSettings& settings) {
  const int n = token_content_symbols(task, settings);
  return {n, n + 1, n + 2, n + 3};
}

void check_token_task(TaskKind task, const TokenTaskSettings& settings, int l_min, int l_max) {
  require_token_task(task, "check_token_task");
  if (l_min < 1) throw UsageError(fmt::format("lengths must be >= 1, got {}", l_min));
  if (l_min > l_max) {
    throw UsageError(fmt::format("empty length range {}..{}", l_min, l_max));
  }
  const int n = settings.n_symbols;
  if (fixed_alphabet(task) == 0 && (n < 2 || n > 4096)) {
    throw UsageError(fmt::format("--n-symbols (n_symbols) must be in 2..4096, got {}", n));
  }
  switch (task) {
    case TaskKind::kPasskey: {
      const int k = settings.key_length;
      if (k < 1) {
        throw UsageError(fmt::format("--key-length (key_length) must be >= 1, got {}", k));
      }
      if (l_min < k + 1) {
        throw UsageError(fmt::format(
            "a passkey of {} symbols (--key-length, key_length) needs length >= {}, got {}", k,
            k + 1, l_min));
      }
      break;
    }
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
  int l_lo = 1, l_hi = l_train;
  if (task == TaskKind::kPasskey) {
    l_lo = settings.key_length + 1;
    l_hi = std::max(l_lo, l_train);
  }
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
  Sequence seq;
  for (int s = 0; s < n_seq; ++s) {
    const int length = static_cast<int>(rng.uniform_int(l_lo, l_hi));
    draw_sequence(task, settings, chain, length, -1, rng, seq);
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
  Sequence seq;
  for (int s = 0; s < n_samples; ++s) {
    draw_sequence(task, settings, chain, length, passkey_fill, rng, seq);
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
