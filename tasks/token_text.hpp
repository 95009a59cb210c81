#pragma once
// A run's tokens as text, both ways (lenlab generate's prompt and output): a text run's tokens are
// its corpus's bytes (tasks/text_corpus.hpp) and BOS; every other token task's are its content
// symbols, written as numbers 0..n−1, and its special tokens by name (BOS, SEP, FILL, MARK;
// tasks/token_tasks.hpp), separated by spaces.
#include <string>
#include <vector>

#include "tasks/task.hpp"
#include "tasks/text_corpus.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

class TokenText {
 public:
  // `corpus`: the text run's (null for the other tasks). std::logic_error for a scalar task.
  TokenText(TaskKind task, const TokenTaskSettings& settings, const TextCorpus* corpus);

  // The prompt's tokens with BOS first (added unless the text starts with it). UsageError, naming
  // the offending character or word and its offset and the valid ones, for a byte the corpus does
  // not hold or a word that is no symbol (the text called `what` there); and for a prompt with
  // nothing but BOS.
  std::vector<int> parse(const std::string& text, const std::string& what = "the prompt") const;
  // One token as it is printed: a text run's byte (BOS as "<BOS>"), else " " and its symbol.
  std::string text_of(int token) const;

 private:
  TaskKind task_;
  int n_content_ = 0;
  SpecialTokens special_{};
  const TextCorpus* corpus_ = nullptr;
  std::vector<int> byte_token_;  // text: byte → token id, or −1
};

}  // namespace lenlab
