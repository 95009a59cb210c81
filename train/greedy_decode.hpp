#pragma once
// Scores on what the model writes (EvalJob::greedy; included by train/evaluate_impl.hpp): each
// token task's answer decoded greedily from the key-value cache (models/model_decode.hpp). A
// sequence's rows up to its first answer row are its prompt, given; from there on, the row after
// an answer row holds that row's argmax (the model's own answer token), every other row the set's
// token (the tasks' answers are contiguous, so the model writes its whole answer). Each answer
// row is scored against its label, as the teacher-forced pass scores it, at the set's positions.
#include <algorithm>
#include <vector>

#include "models/model.hpp"
#include "tasks/token_tasks.hpp"
#include "train/evaluate.hpp"

namespace lenlab {

// For each model k with jobs[k].greedy and a set full[k]: per answer row of the set (its index in
// full[k]->token), whether its greedily decoded token is the label; empty for the others. All
// models decode at once, in chunks of sequences of at most ~max_rows cached rows over all models.
template <class B>
std::vector<std::vector<char>> greedy_correct(Model<B>& model, const std::vector<EvalJob>& jobs,
                                              const std::vector<const Batch*>& full,
                                              size_t max_rows) {
  const int K = model.n_models(), V = model.config().vocab_size;
  std::vector<std::vector<char>> correct(K);
  std::vector<std::vector<int32_t>> readout(K);  // each set's token_readout_offsets
  std::vector<const AttentionSpec*> specs(K);
  int n_max = 0, tokens_max = 1, participating = 0;
  for (int k = 0; k < K; ++k) {
    specs[k] = &jobs[k].attention;
    if (!full[k] || !jobs[k].greedy) continue;
    correct[k].assign(full[k]->token.size(), 0);
    readout[k] = token_readout_offsets(*full[k]);
    n_max = std::max(n_max, full[k]->n_seq());
    tokens_max = std::max(tokens_max, full[k]->max_seq_len());
    ++participating;
  }
  if (participating == 0) return correct;
  const int chunk = static_cast<int>(
      std::clamp<size_t>(max_rows / (static_cast<size_t>(participating) * tokens_max), 1, n_max));
  // One sequence's decoding: its first row in the set, the next row to append, the next answer
  // (an index into the set's readout) and the end of its answers, the last argmax.
  struct Seq {
    int first = 0, next_row = 0, answer = 0, answer_end = 0, written = -1;
    bool active() const { return answer < answer_end; }
  };
  for (int begin = 0; begin < n_max; begin += chunk) {
    const int S = std::min(chunk, n_max - begin);
    std::vector<Seq> seqs(static_cast<size_t>(K) * S);
    std::vector<int> lengths(seqs.size(), 1);
    int capacity = 1, max_position = 0;
    for (int k = 0; k < K; ++k) {
      if (correct[k].empty()) continue;
      const Batch& b = *full[k];
      for (int s = 0; s < S && begin + s < b.n_seq(); ++s) {
        const int i = begin + s;
        Seq& q = seqs[k * S + s];
        q.first = b.offsets[i];
        q.answer = readout[k][i];
        q.answer_end = readout[k][i + 1];
        lengths[k * S + s] = b.seq_len(i);
        capacity = std::max(capacity, b.seq_len(i));
        for (int r = b.offsets[i]; r < b.offsets[i + 1]; ++r)
          max_position = std::max(max_position, b.positions[r]);
      }
    }
    DecodeCache<B> cache =
        model.begin_decode(DecodeSetup{S, capacity, max_position, specs, lengths});
    std::vector<std::vector<int>> tokens(seqs.size()), positions(seqs.size());
    for (;;) {
      bool any = false;
      for (int k = 0; k < K; ++k)
        for (int s = 0; s < S; ++s) {
          Seq& q = seqs[k * S + s];
          tokens[k * S + s].clear();
          positions[k * S + s].clear();
          if (!q.active()) continue;
          // Rows next_row .. the next answer row: the first is the model's own last answer token
          // (none before the first answer), the rest the set's.
          const Batch& b = *full[k];
          const int until = b.token.rows[q.answer];
          for (int r = q.first + q.next_row; r <= until; ++r) {
            const bool own = q.written >= 0 && r == q.first + q.next_row;
            tokens[k * S + s].push_back(own ? q.written : b.tokens[r]);
            positions[k * S + s].push_back(b.positions[r]);
          }
          q.next_row = until - q.first + 1;
          any = true;
        }
      if (!any) break;
      const std::vector<typename B::Scalar> logits = model.decode(cache, tokens, false, &positions);
      for (int k = 0; k < K; ++k)
        for (int s = 0; s < S; ++s) {
          Seq& q = seqs[k * S + s];
          if (tokens[k * S + s].empty()) continue;
          const int label = full[k]->token.labels[q.answer];
          const TokenOutput o =
              score_logits(&logits[(static_cast<size_t>(k) * S + s) * V], V, label);
          correct[k][q.answer] = o.argmax == label;
          q.written = o.argmax;
          ++q.answer;
        }
    }
  }
  return correct;
}

// The two scores of `correct` (greedy_correct's, one set's) into r: answer rows right, and
// sequences with every answer row right.
inline void add_generated_scores(LengthResult& r, const Batch& set,
                                 const std::vector<char>& correct) {
  const std::vector<int32_t> readout = token_readout_offsets(set);
  int right = 0, whole = 0;
  for (int s = 0; s < set.n_seq(); ++s) {
    bool all = true;
    for (int a = readout[s]; a < readout[s + 1]; ++a) {
      right += correct[a];
      all = all && correct[a];
    }
    whole += all;
  }
  r.generated_token_accuracy = correct.empty() ? 0.0 : static_cast<double>(right) / correct.size();
  r.generated_exact_match = set.n_seq() == 0 ? 0.0 : static_cast<double>(whole) / set.n_seq();
}

}  // namespace lenlab
