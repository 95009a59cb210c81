#pragma once
// The long-short misalignment regularizer (../shared/papers/000_598b366ef7ece6da.txt, §4.2 eq. 4
// and Appendix D): train on
//   L* = L_train + α · L_misalign
// with the overlap trick of Appendix D. For each of the batch's B pairs: draw l_extra, sample one
// Markov sequence x of l + l_extra symbols (l = l_train), and make two views of l symbols each,
//   view 1 = [BOS] x_1 .. x_l,      view 2 = [BOS] x_{e+1} .. x_{e+l}     (e = l_extra).
// L_train is the next-token cross-entropy of both views (2B sequences of length l, each weighted
// 1/(2B) as the plain loss weights its sequences). Symbol x_p with p > e sits in both views, at row
// p of view 1 (context x_1..x_p, length p) and row p − e of view 2 (context x_{e+1}..x_p, length
// p − e): the two next-token distributions there are those of two suffixes of one sequence, and
// L_misalign is their symmetric cross-entropy SCE(p, q) = −⟨q, log p⟩ − ⟨p, log q⟩ (the metric of
// train/misalignment.hpp), averaged over every such pair in the batch (Appendix D's torch.mean)
// with gradients through both views.
//
// Which overlap rows: as Appendix D, those whose two context lengths both lie in [⌈l/2⌉, l], the
// metric's range (p − e ≥ ⌈l/2⌉). When the l_extra range reaches past l/2 (the paper's ablation
// "[1, l]"), that limit is dropped, as the paper does there: every overlap row is a pair.
//
// Where lenlab departs from Appendix D, and why:
//  * Appendix D's SCE line computes −⟨q, log p⟩ − ⟨p, log p⟩ (`output1_prob` twice), which is
//    CE(q, p) + H(p), not eq. 1's symmetric cross-entropy; lenlab implements eq. 1.
//  * Appendix D draws one l_extra per step; lenlab draws one per pair (the same expectation with
//    less variance per step, and every step sees several overlaps).
//  * Appendix D's slices start one row later (context ⌊l/2⌋ + 1); lenlab uses the metric's range.
//
// Only the Markov language has it: a suffix of a Markov sequence is again a sequence of the task,
// and its next-token distribution should not depend on how much came before the suffix. On
// mean/length/sum the two views' targets differ (their suffixes' mean, length, sum), so aligning
// the outputs would fight the loss; on passkey, recall, copy, reverse and parity a suffix is no
// longer a prompt of the task.
#include <compare>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "tasks/batch.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

struct MisalignRegularizer {
  double alpha = 0.0;  // the regularizer's weight α; 0: off (the plain batches)
  // l_extra's range "LO:HI" as fractions of l_train: l_extra uniform in
  // [max(1, ⌈LO·l⌉), ⌊HI·l⌋]. The default is the paper's [1, l/2].
  std::string extra = "0:0.5";
  // What α weighs: "sce", eq. 1's symmetric cross-entropy (the paper's); "kl", its divergence part
  // alone, KL(p‖q) + KL(q‖p) = SCE − H(p) − H(q). The SCE also rewards confident outputs: its
  // gradient through both views lowers their entropies, which on the Markov language (uncertain
  // by construction) is a different thing from aligning them.
  std::string kind = "sce";
  // 1: the control run: train on exactly the App. D view pairs (the same batches, the same
  // draws) with α = 0, so that "the regularizer helped" can be told apart from "training on two
  // overlapping fixed-length views helped". Needs α = 0.
  int control = 0;
  auto operator<=>(const MisalignRegularizer&) const = default;
  bool on() const { return alpha > 0; }
  // Whether training batches are App. D's view pairs (the regularizer or its control).
  bool views() const { return on() || control == 1; }
};

// The valid values of MisalignRegularizer::kind.
inline const std::vector<std::string>& misalign_kinds() {
  static const std::vector<std::string> kinds = {"sce", "kl"};
  return kinds;
}

// `extra` as two fractions; UsageError naming --misalign-extra (misalign_extra) and the value
// unless it is LO:HI with 0 <= LO <= HI <= 1.
std::pair<double, double> parse_extra_range(const std::string& extra);

// The l_extra range in symbols, and the shortest context a pair may have.
struct OverlapRange {
  int extra_lo = 1, extra_hi = 1;
  int min_context = 1;
};
OverlapRange overlap_range(const MisalignRegularizer& reg, int l_train);

// UsageError naming the flag, the value and what is allowed: α not finite or < 0; a malformed
// extra range, or one other than the default while the batches are plain; a kind other than
// "sce" or "kl", or other than "sce" while α is 0; a control other than 0 or 1, or 1 with α > 0;
// the views on a task other than markov; a range whose l_extra can leave no overlap row in range.
void check_misalign_regularizer(const MisalignRegularizer& reg, TaskKind task, int l_train);

// One step's batch (reg.views()): n_pairs pairs of views as above, 2·n_pairs sequences of l_train
// symbols: view 1 of pair i is sequence 2i, view 2 sequence 2i + 1. Pair weights α / (pairs in the
// batch), their entropy weights the same for kind "sce" and 0 for "kl" (tasks/batch.hpp,
// ReadoutPairs); a view-1 row read only for its pair has label −1 (no cross-entropy). The control
// (α = 0) draws the same batches, its pairs of weight 0.
Batch misalign_train_batch(const TokenTaskSettings& token, const MarkovChain& chain, int l_train,
                           int n_pairs, const MisalignRegularizer& reg, Rng& rng);

}  // namespace lenlab
