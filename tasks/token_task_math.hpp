#pragma once
// What one token task computes: its alphabet, the lengths it is defined at, its sequences' sizes
// and answer rows, and how it draws a sequence. Each task's math is a TokenTaskMath in a file of
// tasks/ (tasks/basic_token_tasks.cpp, tasks/language_tasks.cpp, tasks/chomsky/); its row in the
// table of tasks (tasks/task.cpp) points at it, and tasks/token_tasks.cpp packs what it draws into
// batches for every task alike. A new token task is its enumerator, its row and its math.
#include <cstdint>
#include <memory>

#include "core/rng.hpp"
#include "tasks/text_corpus.hpp"
#include "tasks/token_sequence.hpp"

namespace lenlab {

struct TokenTaskSettings;  // tasks/token_tasks.hpp
class MarkovChain;         // tasks/markov.hpp

struct SpecialTokens {
  int bos, sep, fill, mark;
};

// What every draw of one batch shares, looked up once per batch.
struct TokenDraw {
  const TokenTaskSettings* settings = nullptr;
  int n_symbols = 0;  // content symbols 0..n_symbols−1
  SpecialTokens special{};
  const MarkovChain* chain = nullptr;        // markov's (TokenTaskMath::needs_chain)
  std::shared_ptr<const TextCorpus> corpus;  // text's (TokenTaskMath::prepare opens it)
  CorpusSplit split = CorpusSplit::kTrain;   // training or test windows
  int depth_fill = -1;  // passkey at a fixed depth: the fill tokens before the key; −1: random

  int32_t symbol(Rng& rng) const { return static_cast<int32_t>(rng.uniform_int(0, n_symbols - 1)); }
};

struct TokenTaskMath {
  // Content symbols (the vocabulary is these, then BOS SEP FILL MARK): a fixed alphabet, or one
  // the settings size (the modulus; a corpus's bytes); null: settings.n_symbols. May throw
  // UsageError on a setting out of range (the modulus).
  int (*alphabet)(const TokenTaskSettings&) = nullptr;
  // BOS alone after the content symbols, no SEP, FILL or MARK (text: every other id is a byte).
  bool bos_only = false;
  bool uses_modulus = false;  // it reads settings.modulus
  // The shortest length it is defined at (null: 1), and why, for the error below it.
  int (*shortest)(const TokenTaskSettings&) = nullptr;
  const char* shortest_why = "";
  // Tokens of one sequence of length L, BOS and any output padding included, and its answer rows
  // (the most a sequence has, for the tasks whose answer ends at END): the cost model's sizes.
  int64_t (*tokens)(const TokenTaskSettings&, int length) = nullptr;
  int (*answer_rows)(const TokenTaskSettings&, int length) = nullptr;
  // Appends one sequence of `length` after BOS (already in seq.tokens) and sets its answer rows.
  void (*draw)(const TokenDraw&, int length, Rng&, TokenSequence&) = nullptr;
  // UsageError, naming the flag and config key, for settings it cannot use at lengths
  // l_min..l_max (called after the lengths and the alphabet are checked); null: nothing more.
  void (*check)(const TokenTaskSettings&, int l_min, int l_max) = nullptr;
  // What the batch's draws share: text opens its corpus (null: nothing).
  void (*prepare)(TokenDraw&) = nullptr;
  // Language modelling: every row answers, predicting the next symbol (markov, text), so results
  // by position in the sequence mean something.
  bool every_row = false;
  bool needs_chain = false;  // markov: a MarkovChain built from the settings
  bool corpus = false;       // text: it reads settings.corpus (runs record the file's hash)
  // Passkey: the fill tokens before the key at a depth in [0, 1] (null: the task has no depth).
  int (*depth_fill)(const TokenTaskSettings&, int length, double depth) = nullptr;
};

// Ends a sequence whose output has `slots` tokens: SEP, the answer, then FILL up to the slots.
// The answer rows are SEP's and the answer's but its last (each predicts the next answer token).
inline void end_with_output(const SpecialTokens& special, const std::vector<int32_t>& answer,
                            int slots, TokenSequence& seq) {
  seq.first = static_cast<int>(seq.tokens.size());
  seq.tokens.push_back(special.sep);
  seq.tokens.insert(seq.tokens.end(), answer.begin(), answer.end());
  seq.tokens.insert(seq.tokens.end(), slots - answer.size(), special.fill);
  seq.count = static_cast<int>(answer.size());
}

}  // namespace lenlab
