#include "train/misalign_regularizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace lenlab {

std::pair<double, double> parse_extra_range(const std::string& extra) {
  const auto bad = [&] {
    return UsageError(fmt::format(
        "--misalign-extra (misalign_extra) must be LO:HI, two fractions of l_train with "
        "0 <= LO <= HI <= 1 (the paper's default is 0:0.5), got '{}'",
        extra));
  };
  const size_t colon = extra.find(':');
  if (colon == std::string::npos) throw bad();
  double lo = 0, hi = 0;
  for (auto [text, value] :
       {std::pair{extra.substr(0, colon), &lo}, {extra.substr(colon + 1), &hi}}) {
    size_t used = 0;
    try {
      *value = std::stod(text, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != text.size()) throw bad();
  }
  if (!(lo >= 0.0 && lo <= hi && hi <= 1.0)) throw bad();
  return {lo, hi};
}

OverlapRange overlap_range(const MisalignRegularizer& reg, int l) {
  const auto [lo, hi] = parse_extra_range(reg.extra);
  OverlapRange r;
  r.extra_lo = std::max(1, static_cast<int>(std::ceil(lo * l - 1e-9)));
  r.extra_hi = static_cast<int>(std::floor(hi * l + 1e-9));
  // Both contexts in [⌈l/2⌉, l] needs e ≤ l/2; a range past that drops the limit (the paper's
  // ablation [1, l]).
  r.min_context = 2 * r.extra_hi <= l ? (l + 1) / 2 : 1;
  return r;
}

void check_misalign_regularizer(const MisalignRegularizer& reg, TaskKind task, int l_train) {
  if (!(std::isfinite(reg.alpha) && reg.alpha >= 0))
    throw UsageError(fmt::format(
        "--misalign-alpha (misalign_alpha) must be a finite number >= 0 (0: off), got {}",
        reg.alpha));
  parse_extra_range(reg.extra);
  const std::vector<std::string>& kinds = misalign_kinds();
  if (std::find(kinds.begin(), kinds.end(), reg.kind) == kinds.end())
    throw UsageError(
        fmt::format("--misalign-kind (misalign_kind) must be one of {} (sce: paper 000's symmetric "
                    "cross-entropy; kl: its divergence part alone), got '{}'",
                    join_choices(kinds), reg.kind));
  if (reg.control != 0 && reg.control != 1)
    throw UsageError(fmt::format(
        "--misalign-control (misalign_control) must be 0 or 1 (1: train on the regularizer's two "
        "views with alpha = 0), got {}",
        reg.control));
  if (reg.control == 1 && reg.on())
    throw UsageError(
        fmt::format("--misalign-control 1 trains the regularizer's views with alpha = 0, but "
                    "--misalign-alpha (misalign_alpha) is {}: give one or the other",
                    reg.alpha));
  if (!reg.on() && reg.kind != MisalignRegularizer{}.kind)
    throw UsageError(fmt::format(
        "--misalign-kind {} has no effect without --misalign-alpha (misalign_alpha): give alpha "
        "> 0, or leave misalign_kind at {}",
        reg.kind, MisalignRegularizer{}.kind));
  if (!reg.views()) {
    if (reg.extra != MisalignRegularizer{}.extra)
      throw UsageError(fmt::format(
          "--misalign-extra {} has no effect without --misalign-alpha (misalign_alpha) or "
          "--misalign-control (misalign_control): give alpha > 0, or leave misalign_extra at {}",
          reg.extra, MisalignRegularizer{}.extra));
    return;
  }
  if (task != TaskKind::kMarkov)
    throw UsageError(fmt::format(
        "{}: the misalignment regularizer applies to task 'markov' only, not '{}': {}",
        reg.on() ? fmt::format("--misalign-alpha {}", reg.alpha) : "--misalign-control 1",
        task_name(task),
        is_token_task(task) ? "a suffix of its sequence is no longer a prompt of the task"
                            : "the two views' targets differ (their suffixes' own "
                              "mean, length or sum), so aligning their outputs fights the loss"));
  const OverlapRange r = overlap_range(reg, l_train);
  if (r.extra_hi < r.extra_lo || r.extra_lo + r.min_context > l_train)
    throw UsageError(fmt::format(
        "--misalign-extra {} at --l-train {} gives l_extra in {}..{}, which leaves no overlap "
        "row whose two contexts are at least {} symbols long; widen the range (the paper's "
        "default is 0:0.5)",
        reg.extra, l_train, r.extra_lo, r.extra_hi, r.min_context));
}

Batch misalign_train_batch(const TokenTaskSettings& token, const MarkovChain& chain, int l_train,
                           int n_pairs, const MisalignRegularizer& reg, Rng& rng) {
  check_misalign_regularizer(reg, TaskKind::kMarkov, l_train);
  if (!reg.views())
    throw std::invalid_argument("misalign_train_batch: neither the regularizer nor its control");
  if (n_pairs < 1)
    throw UsageError(fmt::format("sequences per batch must be >= 1 (got {})", n_pairs));
  const int l = l_train;
  const OverlapRange range = overlap_range(reg, l);
  const int32_t bos = special_tokens(TaskKind::kMarkov, token).bos;
  const double view_weight = 1.0 / (2.0 * n_pairs * l);  // each view's rows: 1/(2B) in all
  Batch batch;
  std::vector<int32_t> x, view;
  for (int i = 0; i < n_pairs; ++i) {
    const int e = static_cast<int>(rng.uniform_int(range.extra_lo, range.extra_hi));
    x.clear();
    chain.append_sample(x, l + e, rng);
    // Symbol p (1-based) of x sits at row p of view 1 and row p − e of view 2; pairs for
    // p = e + min_context .. l. View 1's last row (p = l) predicts a symbol past the view: it is
    // read for its pair only (label −1), kept in sequence order after view 1's other rows.
    const int first_p = e + range.min_context;
    int readout_of_row[2] = {0, 0};  // the readout index of each view's row 0
    for (int v = 0; v < 2; ++v) {
      readout_of_row[v] = batch.token.size();
      const int32_t base = batch.offsets.empty() ? 0 : batch.offsets.back();
      view.assign(1, bos);
      view.insert(view.end(), x.begin() + v * e, x.begin() + v * e + l);
      append_tokens(batch, view);
      for (int row = 0; row < l; ++row) {  // row predicts the view's symbol row + 1
        batch.token.rows.push_back(base + row);
        batch.token.labels.push_back(view[row + 1]);
        batch.token.weights.push_back(view_weight);
      }
      if (v == 0 && first_p <= l) {
        batch.token.rows.push_back(base + l);
        batch.token.labels.push_back(-1);
        batch.token.weights.push_back(0.0);
      }
    }
    for (int p = first_p; p <= l; ++p) {
      batch.token.pairs.first.push_back(readout_of_row[0] + p);
      batch.token.pairs.second.push_back(readout_of_row[1] + (p - e));
    }
  }
  const int P = batch.token.pairs.size();
  const double weight = P > 0 ? reg.alpha / P : 0.0;
  batch.token.pairs.weights.assign(P, weight);
  batch.token.pairs.entropy_weights.assign(P, reg.kind == "sce" ? weight : 0.0);
  return batch;
}

}  // namespace lenlab
