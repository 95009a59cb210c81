#pragma once
// Evaluation at every test length. Scalar tasks: the model's output z is mapped back with f⁻¹
// and compared with the original target y. Token tasks: the answer rows' logits are scored
// against their labels (accuracy, exact match, cross-entropy; the Markov task also against the
// chain itself: its exact entropy, and its own log-loss on the same test tokens). Each length uses
// the task's fixed evaluation set (tasks/task.hpp, tasks/token_tasks.hpp); passkey has one per
// (length, depth).
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "models/model.hpp"
#include "reparam/reparam.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/attention_probe.hpp"
#include "train/attention_stats.hpp"
#include "train/representation_stats.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// The Markov task at one position t = 1..length (the answer row t − 1 predicts x_t), over the
// length's test sequences.
struct PositionResult {
  int position = 0;
  double cross_entropy = 0;  // mean −log p(x_t), nats
  double entropy =
      0;  // H_t: the chain's exact conditional entropy (a perfect model's CE); text: NaN
  double token_accuracy = 0;
  // Markov: the chain's own log-loss on the same tokens, mean −log P(x_t | its context), whose
  // expectation is H_t; text: NaN.
  double chain_cross_entropy = std::numeric_limits<double>::quiet_NaN();
  // Markov: the model's loss above the chain's on the same tokens (NaN for text).
  double excess() const { return cross_entropy - chain_cross_entropy; }
};

struct LengthResult {
  int length = 0;
  int n_sequences = 0;
  // Which metrics below are set: the scalar ones (mse …) or the token ones (token_accuracy …).
  bool token = false;
  bool exact = false;          // all 2^length sequences, probability-weighted
  double mse = 0;              // E[(f⁻¹(z) − y)²]: the paper's test loss
  double mse_reparam = 0;      // E[(z − f(y))²]: the loss the model was trained on
  double mean_prediction = 0;  // E[f⁻¹(z)] over the finite predictions
  double mean_target = 0;      // E[y]
  int n_clamped = 0;           // outputs outside f's range, mapped to its nearest end
  int n_nonfinite = 0;         // f⁻¹(z) not finite (e.g. 1/z² at z = 0): mse is then +inf

  // Token tasks; the token means are pooled over every answer row of the length (the
  // Chomsky-hierarchy study's accuracy), which is also the mean over sequences of their per-token
  // accuracy where every sequence answers at as many rows (all tasks but those ending at END).
  double depth = kNoDepth;    // passkey: the key's depth in [0, 1]; kNoDepth: random or none
  int n_answer_tokens = 0;    // answer rows scored, over all the length's sequences
  double token_accuracy = 0;  // answer rows whose argmax is the label, fraction
  double exact_match = 0;     // sequences with every answer row right, fraction
  double cross_entropy = 0;   // mean −log p(label) per answer row, nats
  // With EvalJob::greedy (else NaN): the same two scores of the answer the model writes, each
  // answer row's token its own argmax at the row before (train/greedy_decode.hpp).
  double generated_token_accuracy = std::numeric_limits<double>::quiet_NaN();
  double generated_exact_match = std::numeric_limits<double>::quiet_NaN();
  // Markov only (else NaN): the chain's own log-loss on the same answer tokens, mean −log P(x_t |
  // its context) per row, and the model's excess over it, cross_entropy − chain_cross_entropy.
  // Paired on the tokens, the excess carries no test-set sampling noise of the chain's own loss:
  // a model that is the chain scores 0 exactly, where cross-entropy minus the mean H_t (the
  // chain's expected loss) scatters by about 0.01 nats over 500 test sequences of length 16.
  double chain_cross_entropy = std::numeric_limits<double>::quiet_NaN();
  double excess_ce = std::numeric_limits<double>::quiet_NaN();
  std::vector<PositionResult> positions;  // markov and text: one per position 1..length
  AttentionStats attention;  // with EvalJob::attention_stats (train/attention_stats.hpp)
  AttentionLogits logits;    // with EvalJob::attention_logits (train/attention_probe.hpp)
  // With EvalJob::representation_projections: per layer, the attention outputs' distance from
  // those at the reference length (train/representation_stats.hpp).
  std::vector<RepresentationDistance> representation;
  // With EvalJob::untrained_distances: the fraction of the (answer row, key) pairs attended whose
  // distance reads a bias entry no training step reached (train/untrained_bias.hpp); else NaN.
  double untrained_pairs = std::numeric_limits<double>::quiet_NaN();
};

// One length's result, accumulated from the model's outputs on that length's evaluation batch
// (in any order, in chunks): add(s, z) for every sequence s, then finish().
class LengthScorer {
 public:
  LengthScorer(const Batch& batch, const Reparam& reparam, int length);
  void add(int s, double z);  // z: the model's output for sequence s of the batch
  // std::logic_error if a sequence was not added.
  LengthResult finish() const;

 private:
  const Batch& batch_;
  const Reparam& reparam_;
  LengthResult r_;
  std::vector<double> z_;            // [n_seq] the outputs, inverted together in finish()
  std::vector<unsigned char> seen_;  // [n_seq]
};

// One length (and depth) of a token task, accumulated like LengthScorer: add(r, …) for every
// answer row r of the batch (its index in batch.token), then finish(). `chain` (markov only: the
// chain the batch was drawn from) and `entropy` (its H_1, H_2, … for at least `length` positions)
// give the exact entropies and the chain's own log-loss on the batch's labels; null otherwise.
// With a chain or `per_position` (text), the result has one PositionResult per answer row of its
// sequences (which must all answer at the same rows); text's entropies are unknown (NaN).
class TokenScorer {
 public:
  TokenScorer(const Batch& batch, const MarkovChain* chain, const double* entropy, int length,
              double depth, bool per_position = false);
  // Answer row r: the log-probability the model gave its label, and whether its argmax was it.
  void add(int r, double log_p_label, bool correct);
  LengthResult finish() const;
  // The index of sequence s's first answer row in batch.token.
  int first_readout(int s) const { return offsets_[s]; }

 private:
  const Batch& batch_;
  std::vector<int32_t> offsets_;  // token_readout_offsets(batch)
  std::vector<double> log_p_;     // [answer rows]
  std::vector<char> correct_, seen_;
  const MarkovChain* chain_ = nullptr;  // markov
  std::vector<double> entropy_;         // markov: H_t, t = 1..length
  bool per_position_ = false;
  LengthResult r_;
};

// The softmax of one row of logits at its label, and its argmax (the first of equal maxima).
struct TokenOutput {
  double log_p_label = 0;
  int argmax = 0;
};
template <class T>
TokenOutput score_logits(const T* logits, int vocab, int label);

// One run's evaluation settings.
struct EvalJob {
  TaskKind task = TaskKind::kLength;
  const Reparam* reparam = nullptr;  // scalar tasks
  std::vector<int> lengths;  // the test lengths, ascending (empty: none, e.g. a diverged run)
  int eval_samples = 0;
  uint64_t eval_seed = 0;
  AttentionSpec attention;       // at test time (inference-side methods); default: plain causal
  bool attention_stats = false;  // also measure LengthResult::attention
  // Token tasks: also score greedy decoding (LengthResult::generated_token_accuracy and
  // generated_exact_match).
  bool greedy = false;
  // Also measure LengthResult::logits, on the first kAttentionProbeSamples sequences of each
  // length, through the training forward (which keeps the probabilities).
  bool attention_logits = false;
  // > 0: also measure LengthResult::representation with this many random projections, against
  // the rows at length representation_reference (the run's l_train; at the same depth), on the
  // first kRepresentationSamples sequences of each set, through the training forward.
  int representation_projections = 0;
  int representation_reference = 0;
  // > 0: every test sequence's positions are a sorted random subset of 0..random_positions−1
  // (train/random_positions.hpp), the same for every run with the same set and range.
  int random_positions = 0;
  // Per distance 0..D (D the largest a test sequence reaches), 1 where the model's learned bias
  // was never trained (models/position_bias.hpp); non-empty: every result also counts
  // LengthResult::untrained_pairs. Empty: not counted.
  std::vector<uint8_t> untrained_distances;
  // Optional: called with every test sequence's raw output z (before f⁻¹), in sequence order
  // within a length: (the length's evaluation set, the sequence's index in it, z).
  std::function<void(const Batch&, int, double)> on_output;
  // Token tasks: the task's settings and (markov) chain, and passkey's depths (each length is
  // evaluated at each; empty: one cell per length at random depths).
  const TokenTaskSettings* token_settings = nullptr;
  const MarkovChain* chain = nullptr;
  std::vector<double> depths;
  // Optional: every answer row's output, sequence by sequence: (the cell's evaluation set, its
  // length, its depth, the sequence's index in it, per answer row of the sequence the probability
  // of its label and the argmax).
  std::function<void(const Batch&, int, double, int, const std::vector<double>&,
                     const std::vector<int>&)>
      on_token_output;
  // Optional: every result as soon as it is scored (a length, or one depth of a passkey length),
  // in the order evaluate() returns them: lets a live page draw the curve while it grows.
  std::function<void(const LengthResult&)> on_result;
};

// A scalar task's job: plain causal attention, no callbacks.
inline EvalJob scalar_job(TaskKind task, const Reparam* reparam, std::vector<int> lengths,
                          int eval_samples, uint64_t eval_seed) {
  EvalJob j;
  j.task = task;
  j.reparam = reparam;
  j.lengths = std::move(lengths);
  j.eval_samples = eval_samples;
  j.eval_seed = eval_seed;
  return j;
}

// A trained run's job: its task, reparam, test lengths, samples, seed, token settings, chain and
// depths (`resolved` and `spec` must outlive the job).
EvalJob eval_job(const ResolvedSpec& resolved, const TrainSpec& spec);

// Evaluates model k on jobs[k] at its lengths (and depths) through the inference path (nothing kept
// for a backward; memory linear in the length), all models at each length at once, in forwards of
// at most `max_rows` rows over all models. Returns each run's results, ascending by (length,
// depth); on_length(k, l) is called after run k's length l (after its last depth).
template <class B>
std::vector<std::vector<LengthResult>> evaluate(Model<B>& model, const std::vector<EvalJob>& jobs,
                                                const std::function<void(int, int)>& on_length = {},
                                                size_t max_rows = B::kDevice ? size_t{1} << 18
                                                                             : size_t{1} << 13);

}  // namespace lenlab
