// The language-modelling token tasks: every row answers, predicting the next symbol (x_t sits at
// row t). markov: a random Markov chain's samples (tasks/markov.hpp), whose true next-symbol
// distribution is known; text: windows of a corpus's bytes (tasks/text_corpus.hpp), BOS the only
// token that is not a byte.
#include "tasks/markov.hpp"
#include "tasks/token_task_math.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab::tasks {
namespace {

int64_t tokens(const TokenTaskSettings&, int length) {
  return int64_t{length} + 1;
}
int every_row(const TokenTaskSettings&, int length) {
  return length;
}

}  // namespace

// [BOS] x1 .. xL: the first `order` symbols iid uniform, the rest following the chain.
extern const TokenTaskMath kMarkov{
    .tokens = tokens,
    .answer_rows = every_row,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          in.chain->append_sample(seq.tokens, length, rng);
          seq.first = 0;
          seq.count = length;
        },
    .check =
        [](const TokenTaskSettings& s, int, int) {
          check_markov_settings(s.n_symbols, s.markov_order, s.markov_concentration);
        },
    .every_row = true,
    .needs_chain = true,
};

// [BOS] x1 .. xL: a window of the corpus's training or test block.
extern const TokenTaskMath kText{
    .alphabet = [](const TokenTaskSettings& s) { return open_corpus(s.corpus)->n_symbols(); },
    .bos_only = true,
    .tokens = tokens,
    .answer_rows = every_row,
    .draw =
        [](const TokenDraw& in, int length, Rng& rng, TokenSequence& seq) {
          in.corpus->append_window(in.split, length, rng, seq.tokens);
          seq.first = 0;
          seq.count = length;
        },
    .check =
        [](const TokenTaskSettings& s, int, int l_max) {
          const auto corpus = open_corpus(s.corpus);
          corpus->check_window(CorpusSplit::kTrain, l_max);
          corpus->check_window(CorpusSplit::kTest, l_max);
        },
    .prepare = [](TokenDraw& draw) { draw.corpus = open_corpus(draw.settings->corpus); },
    .every_row = true,
    .corpus = true,
};

}  // namespace lenlab::tasks
