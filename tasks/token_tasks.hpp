#pragma once
// The token tasks: next-token prediction with teacher forcing on each sequence's answer rows
// (docs/tasks.md has every format with an example). Token readout r means: the logits at row
// rows[r] predict labels[r], which is the token at row rows[r] + 1 of the same sequence (the
// answer is part of the input). Each sequence carries loss weight 1/S (S sequences in the batch),
// spread equally over its answer rows, so a batch's weights sum to 1. The scalar readout
// (read_rows, targets, weights) stays empty. Readout rows are in sequence order.
//
// Vocabulary: content symbols 0..n−1, then BOS = n, SEP = n+1, FILL = n+2, MARK = n+3 (n + 4
// tokens), where n = n_symbols, except the tasks of a fixed alphabet: parity 2 (the bits) and the
// Chomsky-hierarchy tasks' (tasks/chomsky/common.hpp), and text: the bytes its corpus holds, then
// BOS = n alone (n + 1 tokens; tasks/text_corpus.hpp).
//
// "Length" L is each task's size parameter:
//   passkey  [BOS] FILL×a MARK key(k) FILL×b [SEP] key(k)   L = a + 1 + k + b >= k + 1
//   recall   [BOS] k1 v1 .. kL vL [SEP] kq vq               L pairs, distinct keys: L <= n_symbols
//   copy     [BOS] x1 .. xL [SEP] x1 .. xL
//   reverse  [BOS] x1 .. xL [SEP] xL .. x1
//   parity   [BOS] b1 .. bL [SEP] p                         p = XOR of the bits
//   markov   [BOS] x1 .. xL                                 every row 0..L−1 answers
//   text     [BOS] x1 .. xL   L bytes of a corpus's window, every row 0..L−1 answers
// and the Chomsky-hierarchy benchmark's tasks, [BOS] input [SEP] output (tasks/chomsky/).
// Each task's math is its own (tasks/token_task_math.hpp); the functions below read it from the
// task's row, the same for every task. All randomness comes from Rng, so a seed gives identical
// data everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "tasks/batch.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/text_corpus.hpp"
#include "tasks/token_task_math.hpp"

namespace lenlab {

// The largest modulus: its digits are tokens, so it sizes the vocabulary as n_symbols does.
inline constexpr int kMaxModulus = 4096;

struct TokenTaskSettings {
  int n_symbols = 16;                 // content symbols (every token task but parity)
  int key_length = 4;                 // passkey: symbols in the key
  int markov_order = 2;               // markov: the chain's order
  double markov_concentration = 0.5;  // markov: Dirichlet concentration of each transition row
  uint64_t markov_seed = 1;           // markov: the chain's seed (the chain, not the sequences)
  int modulus = 5;     // cycle-navigation's cycle, the arithmetic tasks' modulus (2..kMaxModulus)
  std::string corpus;  // text: the UTF-8 file; "" for the default corpus (corpus_path)
  auto operator<=>(const TokenTaskSettings&) const = default;
};

// A passkey evaluation cell at random depths (and every other task's "depth").
inline constexpr double kNoDepth = -1.0;

// Content symbols of the task: a fixed alphabet's size (above), n_symbols otherwise.
int token_content_symbols(TaskKind task, const TokenTaskSettings& settings);
// content symbols + 4. Both throw std::logic_error for a scalar task (as do the functions below).
int token_vocab_size(TaskKind task, const TokenTaskSettings& settings);
SpecialTokens special_tokens(TaskKind task, const TokenTaskSettings& settings);

// The shortest length the task is defined at: its math's (passkey key_length + 1, a few Chomsky
// tasks 2 or 3), 1 for the others (scalar tasks too).
int shortest_length(TaskKind task, const TokenTaskSettings& settings);

// Why its shortest length is what it is, for a message: "the shortest sequence of task 'X'" and
// the task's reason, if it gives one.
std::string shortest_length_why(TaskKind task);
// Whether the task reads settings.n_symbols (its alphabet is not fixed), settings.modulus.
bool token_task_uses_n_symbols(TaskKind task);
bool token_task_uses_modulus(TaskKind task);
// What a task's math says about it, false for a scalar task: it is tested at depths (passkey);
// every row answers (language modelling: markov, text); its sequences follow a Markov chain built
// from the settings (markov); it reads a corpus (text: runs record the file's hash).
bool task_has_depths(TaskKind task);
bool task_every_row_answers(TaskKind task);
bool task_needs_chain(TaskKind task);
bool task_reads_corpus(TaskKind task);
// Tokens of one sequence of length L, BOS included (the learned position table's rows for L).
int64_t token_sequence_tokens(TaskKind task, const TokenTaskSettings& settings, int length);
// Answer rows of one sequence of length L (the rows the last block runs at; cost/run_cost.hpp):
// the task's own count (the most a sequence has, for the tasks whose answer ends at END), so that
// a new task cannot be costed by a default.
int token_answer_rows(TaskKind task, const TokenTaskSettings& settings, int length);

// Throws UsageError, naming the flag and config key, the value and what is allowed, for settings
// the task cannot use at lengths l_min..l_max: lengths < 1 or l_min > l_max; l_min below
// shortest_length; n_symbols outside 2..4096 (the tasks that use it); modulus outside
// 2..kMaxModulus (the tasks that use it); key_length < 1 (passkey); l_max >
// n_symbols (recall); markov_order < 1, n_symbols^markov_order > 65536 or markov_concentration not
// finite and > 0 (markov); a corpus that cannot be read or whose training or test blocks are
// shorter than l_max (text; TextCorpus). Settings a task does not use are not checked.
void check_token_task(TaskKind task, const TokenTaskSettings& settings, int l_min, int l_max);
// A depth of --depths must be in [0, 1] (NaN is refused); parse_depths checks user text first.
void check_depth(double depth);

// n_seq fresh sequences from rng. Lengths are uniform in s..max(s, l_train), s = shortest_length
// (passkey's key at a uniformly random depth); l_min > 0 raises the shortest (UsageError below the
// task's shortest or above l_train). `chain` is required for markov (built from the settings;
// std::logic_error if missing or not matching) and ignored otherwise.
Batch token_train_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                        int l_train, int n_seq, Rng& rng, int l_min = 0);

// n_samples sequences of exactly `length`, drawn from Rng::stream(eval_seed, length): the same
// arguments give the same batch. Passkey: depth in [0, 1] puts the key block at
// a = lround(depth · (L − k − 1)) fill tokens after BOS (half away from zero), drawn from a stream
// that also depends on the depth, so each (length, depth) cell has its own fixed set; a negative
// depth (the default) draws a uniformly at random per sequence. Other tasks ignore depth.
Batch token_eval_batch(TaskKind task, const TokenTaskSettings& settings, const MarkovChain* chain,
                       int length, int n_samples, uint64_t eval_seed, double depth = -1.0);

// [S + 1] offsets into the token readout: sequence s owns readouts offsets[s] .. offsets[s+1]
// (for exact match: every label of a sequence right). std::logic_error if a readout row lies
// outside every sequence or the rows are not in sequence order.
std::vector<int32_t> token_readout_offsets(const Batch& batch);

}  // namespace lenlab
