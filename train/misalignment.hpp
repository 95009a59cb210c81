#pragma once
// The long-short misalignment of a trained model (../shared/papers/000, §4 eq. 1–2; 003): how far
// apart its outputs are on two suffixes of one sequence,
//   L_misalign = E_{x, l1, l2} D(g(x[−l1:]), g(x[−l2:])),   l1, l2 uniform in [⌈l/2⌉, l]
// for sequences x of the training length l = l_train (the paper's range). D is
//   * scalar tasks: the squared difference (z1 − z2)² of the two raw outputs z (the model's own
//     output, before f⁻¹: with OutRep it is f(y) that the model must keep aligned);
//   * markov: the symmetric cross-entropy of the two next-token distributions after the view,
//     SCE(p, q) = −⟨q, log p⟩ − ⟨p, log q⟩ in nats (eq. 1). Note SCE(p, p) = 2H(p), not 0.
// A view keeps the task's frame: [BOS] + the last l symbols (+ EOS for the scalar tasks), the
// output read where the task reads it. The other token tasks have no suffix that is still a
// prompt of the task (a suffix of a copy sequence loses its separator), so they have no value.
// The sequences are the task's fixed evaluation set at l_train (all 2^l, weighted, when fewer
// than eval_samples), and l1, l2 come from a stream fixed by eval_seed: every run with the same
// settings is measured on the same pairs.
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "models/model.hpp"
#include "models/packed_batch.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/random_positions.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// The symmetric cross-entropy of two distributions p, q and its two parts (in nats):
//   SCE(p, q) = −⟨q, log p⟩ − ⟨p, log q⟩ = [KL(p‖q) + KL(q‖p)] + [H(p) + H(q)],
// the divergence part (0 iff p = q) and the entropy part (the outputs' uncertainty). SCE(p, p) =
// 2H(p): as a measure of disagreement, eq. 1 also counts how uncertain both outputs are.
struct AlignmentParts {
  double sce = 0, divergence = 0, entropy = 0;
};

// From two rows of n log-probabilities (each row's exp summing to 1; −inf: probability 0, whose
// terms are 0 when both sides are 0, +inf divergence when only one is).
AlignmentParts alignment_parts(const double* log_p, const double* log_q, int n);

struct Misalignment {
  double value = 0;  // weighted mean of D over the pairs
  int n_pairs = 0;
  int l_lo = 0, l_hi = 0;  // the suffix lengths' range
  std::string kind;        // what D is, for the manifest
  // Markov only (D is the SCE): the weighted means of its parts (value = parts.sce), and what a
  // perfect model gives on the same pairs (perfect_misalignment).
  std::optional<AlignmentParts> parts, perfect;
};

// The manifest's "misalignment": {value, measure, suffix_lengths, pairs}, and for markov also the
// SCE's parts "divergence" and "entropy" and "perfect": {value, divergence, entropy}.
nlohmann::ordered_json misalignment_json(const Misalignment& m);

inline bool has_misalignment(TaskKind task) {
  return task_info(task).misalignment;
}

// The two views of every sequence: first[s] and second[s] hold sequence s's suffixes of lengths
// l1 and l2, and weights[s] its weight (summing to 1).
struct MisalignmentViews {
  Batch first, second;
  std::vector<double> weights;
  int l_lo = 0, l_hi = 0;
};

MisalignmentViews misalignment_views(const ResolvedSpec& resolved, const TrainSpec& spec);

// The parts a perfect model of the chain gives on `views` (a markov task's): each view's
// next-token distribution is the chain's own given the view (P(· | its last `order` symbols), or
// uniform when the view holds fewer: a sequence's first `order` symbols are iid uniform), fed to
// alignment_parts and weighted as the metric weighs the pairs. With views of at least `order`
// symbols both sides are the same distribution: divergence 0, SCE = 2 × its entropy.
AlignmentParts perfect_misalignment(const MarkovChain& chain, const MisalignmentViews& views);

// D of one pair of outputs: scalars, or two rows of V logits (their softmax's alignment_parts).
double squared_difference(double z1, double z2);
template <class T>
AlignmentParts logit_alignment_parts(const T* logits1, const T* logits2, int vocab) {
  // log-softmax of each row, in double
  auto log_softmax = [&](const T* z) {
    double m = -INFINITY;
    for (int v = 0; v < vocab; ++v) m = std::max(m, static_cast<double>(z[v]));
    double sum = 0;
    for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(z[v]) - m);
    std::vector<double> out(vocab);
    for (int v = 0; v < vocab; ++v) out[v] = static_cast<double>(z[v]) - m - std::log(sum);
    return out;
  };
  const std::vector<double> a = log_softmax(logits1), b = log_softmax(logits2);
  return alignment_parts(a.data(), b.data(), vocab);
}
template <class T>
double symmetric_cross_entropy(const T* logits1, const T* logits2, int vocab) {
  return logit_alignment_parts(logits1, logits2, vocab).sce;
}

// The misalignment of each model k of `model` (its run: resolved[k], specs[k]); nullopt for a
// task without one or a run marked skip[k] (diverged). Inference forwards only.
template <class B>
std::vector<std::optional<Misalignment>> misalignment(
    Model<B>& model, const std::vector<const ResolvedSpec*>& resolved,
    const std::vector<const TrainSpec*>& specs, const std::vector<bool>& skip) {
  const int K = model.n_models(), V = model.config().vocab_size;
  std::vector<std::optional<Misalignment>> out(K);
  std::vector<MisalignmentViews> views(K);
  bool any = false;
  for (int k = 0; k < K; ++k)
    if (!skip[k] && has_misalignment(resolved[k]->task)) {
      views[k] = misalignment_views(*resolved[k], *specs[k]);
      any = true;
    }
  if (!any) return out;
  // Each view's outputs, per model: [K][sequences] scalars or [K][sequences][V] logits.
  auto outputs = [&](bool second) {
    std::vector<const Batch*> ptrs(K);
    for (int k = 0; k < K; ++k) ptrs[k] = second ? &views[k].second : &views[k].first;
    PackedBatch<B> packed;
    packed.pack(ptrs, model.config());
    model.infer(packed);
    return std::make_pair(packed.n_scalar > 0 ? model.download_scalar_out(packed)
                                              : model.download_token_logits(packed),
                          packed.n_scalar > 0 ? packed.n_scalar : packed.n_token);
  };
  const auto [a, stride] = outputs(false);
  const auto [b, stride_b] = outputs(true);
  (void)stride_b;  // the same sequences, so the same stride
  for (int k = 0; k < K; ++k) {
    const MisalignmentViews& v = views[k];
    if (v.weights.empty()) continue;
    const bool token = is_token_task(resolved[k]->task);
    Misalignment m;
    m.n_pairs = static_cast<int>(v.weights.size());
    m.l_lo = v.l_lo;
    m.l_hi = v.l_hi;
    m.kind = token ? "symmetric cross-entropy of the next-token distributions (nats)"
                   : "squared difference of the raw outputs";
    AlignmentParts parts;
    for (int s = 0; s < m.n_pairs; ++s) {
      const size_t at = static_cast<size_t>(k) * stride + s;
      if (!token) {
        m.value += v.weights[s] * squared_difference(a[at], b[at]);
        continue;
      }
      const AlignmentParts p = logit_alignment_parts(&a[at * V], &b[at * V], V);
      parts.sce += v.weights[s] * p.sce;
      parts.divergence += v.weights[s] * p.divergence;
      parts.entropy += v.weights[s] * p.entropy;
    }
    if (token) {
      m.value = parts.sce;
      m.parts = parts;
      m.perfect = perfect_misalignment(*resolved[k]->chain, v);
    }
    out[k] = m;
  }
  return out;
}

}  // namespace lenlab
