#include "train/misalignment.hpp"

#include <algorithm>
#include <cmath>

namespace lenlab {

namespace {

// Appends [BOS] + content (+ EOS for a scalar task) at positions 0, 1, …, read where the task
// reads: the scalar head at EOS, or the token head at the last row (its label is not used).
void append_view(Batch& b, bool token, int32_t bos, const std::vector<int32_t>& content) {
  std::vector<int32_t> tokens = {bos};
  tokens.insert(tokens.end(), content.begin(), content.end());
  if (!token) {
    tokens.push_back(kEos);
    append_sequence(b, tokens, 0.0);
    return;
  }
  append_tokens(b, tokens);
  b.token.rows.push_back(b.offsets.back() - 1);
  b.token.labels.push_back(0);
  b.token.weights.push_back(1.0);
}

}  // namespace

AlignmentParts alignment_parts(const double* log_p, const double* log_q, int n) {
  // x·log x with the convention 0·log 0 = 0 (a probability 0 adds nothing)
  auto term = [](double prob, double log_value) { return prob == 0 ? 0.0 : prob * log_value; };
  AlignmentParts out;
  for (int v = 0; v < n; ++v) {
    const double p = std::exp(log_p[v]), q = std::exp(log_q[v]);
    out.sce -= term(q, log_p[v]) + term(p, log_q[v]);
    out.entropy -= term(p, log_p[v]) + term(q, log_q[v]);
    if (p != q) out.divergence += (p - q) * (log_p[v] - log_q[v]);  // KL(p‖q) + KL(q‖p), termwise
  }
  return out;
}

AlignmentParts perfect_misalignment(const MarkovChain& chain, const MisalignmentViews& views) {
  const int n = chain.n_symbols(), order = chain.order();
  const std::vector<double> uniform(n, -std::log(static_cast<double>(n)));
  std::vector<double> log_probs[2];
  AlignmentParts total;
  for (size_t s = 0; s < views.weights.size(); ++s) {
    int side = 0;
    for (const Batch* view : {&views.first, &views.second}) {
      // The view is [BOS] + its symbols: the last `order` of them are the context.
      const int end = view->offsets[s + 1], symbols = end - view->offsets[s] - 1;
      std::vector<double>& lp = log_probs[side++];
      lp = uniform;
      if (symbols >= order) {
        const double* probs = chain.probs(chain.context_index(view->tokens.data() + end - order));
        for (int v = 0; v < n; ++v) lp[v] = std::log(probs[v]);
      }
    }
    const AlignmentParts p = alignment_parts(log_probs[0].data(), log_probs[1].data(), n);
    total.sce += views.weights[s] * p.sce;
    total.divergence += views.weights[s] * p.divergence;
    total.entropy += views.weights[s] * p.entropy;
  }
  return total;
}

nlohmann::ordered_json misalignment_json(const Misalignment& m) {
  nlohmann::ordered_json j = {{"value", m.value},
                              {"measure", m.kind},
                              {"suffix_lengths", {m.l_lo, m.l_hi}},
                              {"pairs", m.n_pairs}};
  if (m.parts) {
    j["divergence"] = m.parts->divergence;
    j["entropy"] = m.parts->entropy;
  }
  if (m.perfect)
    j["perfect"] = {{"value", m.perfect->sce},
                    {"divergence", m.perfect->divergence},
                    {"entropy", m.perfect->entropy}};
  return j;
}

double squared_difference(double z1, double z2) {
  return (z1 - z2) * (z1 - z2);
}

MisalignmentViews misalignment_views(const ResolvedSpec& resolved, const TrainSpec& spec) {
  const TaskKind task = resolved.task;
  const bool token = is_token_task(task);
  const int L = spec.l_train;
  MisalignmentViews v;
  v.l_hi = L;
  v.l_lo = std::max(1, (L + 1) / 2);
  const Batch set = token ? token_eval_batch(task, spec.token, resolved.chain.get(), L,
                                             spec.eval_samples, spec.eval_seed)
                          : eval_batch(task, L, spec.eval_samples, spec.eval_seed);
  const int32_t bos = token ? special_tokens(task, spec.token).bos : kBos;
  Rng rng = Rng::stream(spec.eval_seed ^ 0x4D4953414C49474EULL, static_cast<uint64_t>(L));
  double total = 0;
  for (int s = 0; s < set.n_seq(); ++s) {
    // The sequence's L content symbols: after BOS (and before EOS for a scalar task).
    const int32_t* content = set.tokens.data() + set.offsets[s] + 1;
    for (Batch* view : {&v.first, &v.second}) {
      const int l = static_cast<int>(rng.uniform_int(v.l_lo, v.l_hi));
      append_view(*view, token, bos, std::vector<int32_t>(content + L - l, content + L));
    }
    v.weights.push_back(token ? 1.0 : set.weight(s));
    total += v.weights.back();
  }
  for (double& w : v.weights) w /= total;
  if (spec.random_positions > 0)  // the run's positions, as its evaluation draws them
    for (Batch* view : {&v.first, &v.second}) {
      Rng prng = evaluation_positions_rng(spec.eval_seed, spec.random_positions, L);
      randomize_positions(*view, spec.random_positions, prng);
    }
  return v;
}

}  // namespace lenlab
