// The token tasks' batches, for every task alike: what a task's row says about it (its math,
// tasks/token_task_math.hpp) and its sequences packed with their answer rows.
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
#include "tasks/token_task_math.hpp"

namespace lenlab {
namespace {

// The task's math (its row's), or std::logic_error for a scalar task.
const TokenTaskMath& token_math(TaskKind task, const char* function) {
  const TokenTaskMath* math = task_info(task).token;
  if (!math)
    throw std::logic_error(std::string(function) + ": '" + task_name(task) +
                           "' is not a token task");
  return *math;
}

void require_chain(const TokenTaskMath& math, const TokenTaskSettings& settings,
                   const MarkovChain* chain) {
  if (!math.needs_chain) return;
  if (chain == nullptr || chain->n_symbols() != settings.n_symbols ||
      chain->order() != settings.markov_order) {
    throw std::logic_error("markov batches need the MarkovChain built from their settings");
  }
}

// What every draw of a batch shares, looked up once per batch (text's corpus lookup is a file
// status and a lock).
TokenDraw token_draw(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                     CorpusSplit split) {
  const TokenTaskMath& math = token_math(task, "token_draw");
  TokenDraw draw;
  draw.settings = &settings;
  draw.n_symbols = token_content_symbols(task, settings);
  draw.special = special_tokens(task, settings);
  draw.chain = chain;
  draw.split = split;
  if (math.prepare) math.prepare(draw);
  return draw;
}

// Draws a sequence of length L into `seq`: BOS, then the task's own.
void draw_sequence(const TokenTaskMath& math, const TokenDraw& draw, int length, Rng& rng,
                   TokenSequence& seq) {
  seq.tokens.clear();
  seq.tokens.push_back(draw.special.bos);
  math.draw(draw, length, rng, seq);
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
  return token_math(task, "token_sequence_tokens").tokens(settings, length);
}

int token_answer_rows(TaskKind task, const TokenTaskSettings& settings, int length) {
  return token_math(task, "token_answer_rows").answer_rows(settings, length);
}

int shortest_length(TaskKind task, const TokenTaskSettings& settings) {
  const TokenTaskMath* math = task_info(task).token;
  return math && math->shortest ? math->shortest(settings) : 1;
}

int token_content_symbols(TaskKind task, const TokenTaskSettings& settings) {
  const TokenTaskMath& math = token_math(task, "token_content_symbols");
  return math.alphabet ? math.alphabet(settings) : settings.n_symbols;
}

int token_vocab_size(TaskKind task, const TokenTaskSettings& settings) {
  return token_content_symbols(task, settings) +
         (token_math(task, "token_vocab_size").bos_only ? 1 : 4);
}

SpecialTokens special_tokens(TaskKind task, const TokenTaskSettings& settings) {
  const int n = token_content_symbols(task, settings);
  if (token_math(task, "special_tokens").bos_only)
    return {n, -1, -1, -1};  // BOS alone: no token is one of the others
  return {n, n + 1, n + 2, n + 3};
}

bool token_task_uses_n_symbols(TaskKind task) {
  return token_math(task, "token_task_uses_n_symbols").alphabet == nullptr;
}

bool token_task_uses_modulus(TaskKind task) {
  return token_math(task, "token_task_uses_modulus").uses_modulus;
}

std::string shortest_length_why(TaskKind task) {
  const TokenTaskMath* math = task_info(task).token;
  const std::string why = math && *math->shortest_why ? std::string(": ") + math->shortest_why : "";
  return fmt::format("the shortest sequence of task '{}'{}", task_name(task), why);
}

bool task_has_depths(TaskKind task) {
  const TokenTaskMath* math = task_info(task).token;
  return math && math->depth_fill;
}
bool task_every_row_answers(TaskKind task) {
  const TokenTaskMath* math = task_info(task).token;
  return math && math->every_row;
}
bool task_needs_chain(TaskKind task) {
  const TokenTaskMath* math = task_info(task).token;
  return math && math->needs_chain;
}
bool task_reads_corpus(TaskKind task) {
  const TokenTaskMath* math = task_info(task).token;
  return math && math->corpus;
}

void check_token_task(TaskKind task, const TokenTaskSettings& settings, int l_min, int l_max) {
  const TokenTaskMath& math = token_math(task, "check_token_task");
  if (l_min < 1) throw UsageError(fmt::format("lengths must be >= 1, got {}", l_min));
  if (l_min > l_max) {
    throw UsageError(fmt::format("empty length range {}..{}", l_min, l_max));
  }
  const int n = settings.n_symbols;
  if (!math.alphabet && (n < 2 || n > 4096)) {
    throw UsageError(fmt::format("--n-symbols (n_symbols) must be in 2..4096, got {}", n));
  }
  // The alphabet's own checks (the modulus; a corpus that cannot be read).
  if (math.alphabet) math.alphabet(settings);
  if (math.check) math.check(settings, l_min, l_max);
  const int shortest = shortest_length(task, settings);
  if (l_min < shortest)
    throw UsageError(fmt::format("task '{}' needs length >= {} ({}), got {}", task_name(task),
                                 shortest, math.shortest_why, l_min));
}

void check_depth(double depth) {
  if (!(depth >= 0.0 && depth <= 1.0)) {
    throw UsageError(fmt::format("--depths: a depth must be in [0, 1], got {}", depth));
  }
}

Batch token_train_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                        int l_train, int n_seq, Rng& rng, int l_min) {
  const TokenTaskMath& math = token_math(task, "token_train_batch");
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
  require_chain(math, settings, chain);
  check_batch_size(int64_t{n_seq} * math.tokens(settings, l_hi), n_seq, l_hi);
  Batch batch;
  batch.offsets.reserve(n_seq + 1);
  batch.offsets.push_back(0);
  const TokenDraw draw = token_draw(task, settings, chain, CorpusSplit::kTrain);
  TokenSequence seq;
  for (int s = 0; s < n_seq; ++s) {
    const int length = static_cast<int>(rng.uniform_int(l_lo, l_hi));
    draw_sequence(math, draw, length, rng, seq);
    append_token_sequence(seq, n_seq, batch);
  }
  return batch;
}

Batch token_eval_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                       int length, int n_samples, uint64_t eval_seed, double depth) {
  const TokenTaskMath& math = token_math(task, "token_eval_batch");
  if (n_samples < 1) {
    throw UsageError(fmt::format("evaluation samples must be >= 1 (got {})", n_samples));
  }
  const bool fixed_depth = math.depth_fill && !(depth < 0.0);  // NaN is checked
  if (fixed_depth) check_depth(depth);
  check_token_task(task, settings, length, length);
  require_chain(math, settings, chain);
  check_batch_size(int64_t{n_samples} * math.tokens(settings, length), n_samples, length);
  uint64_t seed = eval_seed;
  TokenDraw draw = token_draw(task, settings, chain, CorpusSplit::kTest);
  if (fixed_depth) {
    if (depth == 0.0) depth = 0.0;  // −0 and +0 are one cell
    uint64_t bits = 0;
    std::memcpy(&bits, &depth, sizeof bits);
    seed ^= Rng(bits).next_u64();  // the depth's own stream: its bits hashed by the RNG
    draw.depth_fill = math.depth_fill(settings, length, depth);
  }
  Rng rng = Rng::stream(seed, static_cast<uint64_t>(length));
  Batch batch;
  batch.tokens.reserve(static_cast<size_t>(n_samples) * math.tokens(settings, length));
  batch.positions.reserve(batch.tokens.capacity());
  batch.offsets.reserve(n_samples + 1);
  batch.offsets.push_back(0);
  TokenSequence seq;
  for (int s = 0; s < n_samples; ++s) {
    draw_sequence(math, draw, length, rng, seq);
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
