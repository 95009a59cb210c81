#include "train/evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"

namespace lenlab {

LengthScorer::LengthScorer(const Batch& batch, const Reparam& reparam, int length)
    : batch_(batch), reparam_(reparam) {
  r_.length = length;
  r_.n_sequences = batch.n_seq();
  r_.exact = !batch.weights.empty();
  z_.assign(static_cast<size_t>(batch.n_seq()), 0.0);
  seen_.assign(z_.size(), 0);
}

namespace {

// A model whose output is not finite has no result to write: the numbers of a finite model
// under accepted settings never get here, so its weights or the settings must be looked at.
UsageError non_finite_output(int length, double value) {
  return UsageError(fmt::format(
      "the model's output is {} on a test sequence of length {}: its weights or the test-time "
      "settings (temperature, scaling, caps) make the forward pass overflow; no results are "
      "written for it",
      value, length));
}

}  // namespace

void LengthScorer::add(int s, double zs) {
  z_.at(static_cast<size_t>(s)) = zs;
  seen_[static_cast<size_t>(s)] = 1;
}

LengthResult LengthScorer::finish() const {
  if (std::find(seen_.begin(), seen_.end(), 0) != seen_.end())
    throw std::logic_error("LengthScorer: a sequence was not scored");
  // f⁻¹ and f of the whole length at once (a reparam registered from Python: one call each),
  // then the sums in sequence order.
  const size_t S = z_.size();
  for (size_t s = 0; s < S; ++s)
    if (!std::isfinite(z_[s])) throw non_finite_output(r_.length, z_[s]);
  std::vector<double> y_hat(S), fy(S);
  std::vector<unsigned char> clamped(S);
  reparam_.inverse_many(z_.data(), y_hat.data(), clamped.data(), S);
  reparam_.forward_many(batch_.targets.data(), fy.data(), S);
  LengthResult r = r_;
  double finite_weight = 0;
  for (size_t s = 0; s < S; ++s) {
    const double w = r.exact ? batch_.weights[s] : 1.0 / batch_.n_seq();
    const double y = batch_.targets[s];
    r.n_clamped += clamped[s];
    if (!std::isfinite(y_hat[s])) {
      ++r.n_nonfinite;
    } else {
      r.mse += w * (y_hat[s] - y) * (y_hat[s] - y);
      r.mean_prediction += w * y_hat[s];
      finite_weight += w;
    }
    r.mse_reparam += w * (z_[s] - fy[s]) * (z_[s] - fy[s]);
    r.mean_target += w * y;
  }
  if (r.n_nonfinite > 0) {
    // Honest about it: one infinite prediction makes the mean squared error infinite.
    r.mse = std::numeric_limits<double>::infinity();
    r.mean_prediction = finite_weight > 0 ? r.mean_prediction / finite_weight
                                          : std::numeric_limits<double>::infinity();
  }
  return r;
}

TokenScorer::TokenScorer(const Batch& batch, const MarkovChain* chain, const double* entropy,
                         int length, double depth, bool per_position)
    : batch_(batch),
      offsets_(token_readout_offsets(batch)),
      chain_(chain),
      per_position_(per_position || chain) {
  if ((chain == nullptr) != (entropy == nullptr))
    throw std::logic_error("TokenScorer: a Markov chain needs its entropies, and only it");
  const size_t R = batch.token.rows.size();
  log_p_.assign(R, 0.0);
  correct_.assign(R, 0);
  seen_.assign(R, 0);
  r_.token = true;
  r_.length = length;
  r_.depth = depth;
  r_.n_sequences = batch.n_seq();
  r_.n_answer_tokens = static_cast<int>(R);
  if (per_position_) {
    // Per-position results need every sequence to answer at the same positions.
    for (int s = 0; s < batch.n_seq(); ++s)
      if (offsets_[s + 1] - offsets_[s] != offsets_[1] - offsets_[0])
        throw std::logic_error(
            "TokenScorer: per-position sequences of one length with different rows");
  }
  if (entropy) entropy_.assign(entropy, entropy + length);
}

void TokenScorer::add(int r, double log_p_label, bool correct) {
  log_p_[r] = log_p_label;
  correct_[r] = correct;
  seen_[r] = 1;
}

LengthResult TokenScorer::finish() const {
  LengthResult r = r_;
  const int S = batch_.n_seq();
  if (std::find(seen_.begin(), seen_.end(), 0) != seen_.end())
    throw std::logic_error("TokenScorer: an answer row was not scored");
  if (S == 0 || r.n_answer_tokens == 0) return r;
  const bool markov = chain_ != nullptr;
  const int A = offsets_[1] - offsets_[0];  // per position: every sequence's rows
  if (per_position_) r.positions.resize(A);
  if (markov)
    for (PositionResult& p : r.positions) p.chain_cross_entropy = 0;
  double ce = 0, chain_ce = 0, right = 0, whole = 0;
  for (int s = 0; s < S; ++s) {
    bool all = true;
    // Markov's answer row a predicts x_{a+1}: the sequence's labels are its symbols x_1..x_L.
    const int32_t* symbols = batch_.token.labels.data() + offsets_[s];
    for (int a = 0; a < offsets_[s + 1] - offsets_[s]; ++a) {
      const int i = offsets_[s] + a;
      if (std::isnan(log_p_[i])) throw non_finite_output(r.length, log_p_[i]);
      ce -= log_p_[i];
      right += correct_[i];
      all = all && correct_[i];
      const double chain_log_p = markov ? chain_->log_prob(symbols, a) : 0.0;
      chain_ce -= chain_log_p;
      if (per_position_) {
        r.positions[a].cross_entropy -= log_p_[i] / S;
        r.positions[a].token_accuracy += correct_[i] / static_cast<double>(S);
        if (markov) r.positions[a].chain_cross_entropy -= chain_log_p / S;
      }
    }
    whole += all;
  }
  // Pooled over the answer rows of every sequence, as the Chomsky-hierarchy study pools its
  // accuracy (the same as the mean over sequences where each sequence has as many rows).
  const double n = r.n_answer_tokens;
  r.cross_entropy = ce / n;
  r.token_accuracy = right / n;
  r.exact_match = whole / S;
  if (per_position_) {
    // Answer a predicts x_{a+1}: position t = a + 1, whose expected perfect cross-entropy is H_t.
    for (int a = 0; a < A; ++a) {
      r.positions[a].position = a + 1;
      r.positions[a].entropy = markov ? entropy_[a] : std::numeric_limits<double>::quiet_NaN();
    }
  }
  if (markov) {
    // Paired on the same tokens: the chain's own loss, not its expectation, is subtracted.
    r.chain_cross_entropy = chain_ce / n;
    r.excess_ce = r.cross_entropy - r.chain_cross_entropy;
  }
  return r;
}

template <class T>
TokenOutput score_logits(const T* logits, int vocab, int label) {
  int argmax = 0;
  for (int v = 1; v < vocab; ++v)
    if (logits[v] > logits[argmax]) argmax = v;
  // log softmax in double, shifted by the max.
  const double m = logits[argmax];
  double sum = 0;
  for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - m);
  return {static_cast<double>(logits[label]) - m - std::log(sum), argmax};
}
template TokenOutput score_logits<float>(const float*, int, int);
template TokenOutput score_logits<double>(const double*, int, int);

EvalJob eval_job(const ResolvedSpec& resolved, const TrainSpec& spec) {
  EvalJob j = scalar_job(resolved.task, &resolved.reparam, resolved.test_lengths, spec.eval_samples,
                         spec.eval_seed);
  if (is_token_task(resolved.task)) {
    j.token_settings = &spec.token;
    j.chain = resolved.chain.get();
    j.depths = resolved.depths;
  }
  j.random_positions = spec.random_positions;
  return j;
}

}  // namespace lenlab
