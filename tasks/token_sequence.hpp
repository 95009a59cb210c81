#pragma once
// One token-task sequence as its generator draws it (tasks/token_tasks.cpp and
// tasks/chomsky_tasks.cpp draw into it; token_tasks.cpp packs it into a Batch).
#include <cstdint>
#include <vector>

namespace lenlab {

// tokens: the sequence, BOS first. Its answer rows are first .. first + count − 1 (every task's
// answer rows are contiguous): row r's logits predict tokens[r + 1].
struct TokenSequence {
  std::vector<int32_t> tokens;
  std::vector<int32_t> scratch;  // a generator's working space (recall's keys, a stack, bits)
  int first = 0;
  int count = 0;
};

// Ends a one-answer sequence: SEP, whose row predicts the answer that follows it.
inline void end_with_answer(int32_t sep, int32_t answer, TokenSequence& seq) {
  seq.first = static_cast<int>(seq.tokens.size());
  seq.tokens.push_back(sep);
  seq.tokens.push_back(answer);
  seq.count = 1;
}

}  // namespace lenlab
