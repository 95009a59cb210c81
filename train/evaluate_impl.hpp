#pragma once
// evaluate()'s definition (train/evaluate.hpp), instantiated per backend: train/trainer.cpp (CPU),
// train/cuda/instantiate.cpp (CUDA builds).
#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "train/evaluate.hpp"

namespace lenlab {

template <class B>
std::vector<std::vector<LengthResult>> evaluate(Model<B>& model, const std::vector<EvalJob>& jobs,
                                                const std::function<void(int, int)>& on_length,
                                                size_t max_rows) {
  const int K = model.n_models();
  if (static_cast<int>(jobs.size()) != K)
    throw std::invalid_argument("evaluate: one job per model is needed");
  std::vector<int> all;  // every job's lengths, ascending, each once
  for (const EvalJob& j : jobs) all.insert(all.end(), j.lengths.begin(), j.lengths.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<std::vector<LengthResult>> results(K);
  PackedBatch<B> packed;
  for (const int l : all) {
    // Runs with the same task and evaluation settings share one evaluation set.
    std::map<std::tuple<TaskKind, int, uint64_t>, Batch> sets;
    std::vector<const Batch*> full(K, nullptr);
    std::vector<std::optional<LengthScorer>> scorers(K);
    int n_max = 0, participating = 0;
    for (int k = 0; k < K; ++k) {
      const EvalJob& j = jobs[k];
      if (!std::binary_search(j.lengths.begin(), j.lengths.end(), l)) continue;
      const auto key = std::make_tuple(j.task, j.eval_samples, j.eval_seed);
      auto it = sets.find(key);
      if (it == sets.end())
        it = sets.emplace(key, eval_batch(j.task, l, j.eval_samples, j.eval_seed)).first;
      full[k] = &it->second;
      scorers[k].emplace(it->second, *j.reparam, l);
      n_max = std::max(n_max, it->second.n_seq());
      ++participating;
    }
    // Sequences per forward: at most max_rows rows over all models (memory stays bounded).
    const int chunk = static_cast<int>(
        std::clamp<size_t>(max_rows / (static_cast<size_t>(participating) * (l + 2)), 1, n_max));
    for (int begin = 0; begin < n_max; begin += chunk) {
      std::vector<Batch> slices(K);
      std::vector<const Batch*> ptrs(K);
      for (int k = 0; k < K; ++k) {
        if (full[k] && begin < full[k]->n_seq())
          slices[k] = slice_batch(*full[k], begin, std::min(begin + chunk, full[k]->n_seq()));
        slices[k].attention = jobs[k].attention;
        ptrs[k] = &slices[k];
      }
      packed.pack(ptrs, model.config());
      model.infer(packed);
      const auto z = model.download_scalar_out(packed);
      const size_t R = packed.n_scalar;
      for (int k = 0; k < K; ++k)
        for (int s = 0; s < slices[k].n_read(); ++s) {
          scorers[k]->add(begin + s, static_cast<double>(z[k * R + s]));
          if (jobs[k].on_output) jobs[k].on_output(*full[k], begin + s, z[k * R + s]);
        }
    }
    for (int k = 0; k < K; ++k)
      if (scorers[k]) {
        results[k].push_back(scorers[k]->finish());
        if (on_length) on_length(k, l);
      }
  }
  return results;
}

}  // namespace lenlab
