#include "lab/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lenlab {

namespace {

// Sequences [begin, end) of `b` as a batch of their own.
Batch slice(const Batch& b, int begin, int end) {
  Batch out;
  const int t0 = b.offsets[begin], t1 = b.offsets[end];
  out.tokens.assign(b.tokens.begin() + t0, b.tokens.begin() + t1);
  for (int s = begin; s <= end; ++s) out.offsets.push_back(b.offsets[s] - t0);
  out.targets.assign(b.targets.begin() + begin, b.targets.begin() + end);
  return out;
}

}  // namespace

std::vector<LengthResult> evaluate(Transformer<float>& model, TaskKind task, const Reparam& reparam,
                                   int l_max, int n_samples, uint64_t eval_seed,
                                   const std::function<void(int)>& on_length, int chunk) {
  std::vector<LengthResult> results;
  for (int l = 1; l <= l_max; ++l) {
    const Batch batch = eval_batch(task, l, n_samples, eval_seed);
    LengthResult r;
    r.length = l;
    r.n_sequences = batch.n_seq();
    r.exact = !batch.weights.empty();
    double finite_weight = 0;
    for (int begin = 0; begin < batch.n_seq(); begin += chunk) {
      const int end = std::min(begin + chunk, batch.n_seq());
      const cpu::Buffer<float>& z = model.forward(slice(batch, begin, end));
      for (int s = begin; s < end; ++s) {
        const double w = r.exact ? batch.weights[s] : 1.0 / batch.n_seq();
        const double y = batch.targets[s], zs = z[s - begin];
        bool clamped = false;
        const double y_hat = reparam.inverse(zs, &clamped);
        r.n_clamped += clamped;
        if (!std::isfinite(y_hat)) {
          ++r.n_nonfinite;
        } else {
          r.mse += w * (y_hat - y) * (y_hat - y);
          r.mean_prediction += w * y_hat;
          finite_weight += w;
        }
        const double fy = reparam.forward(y);
        r.mse_reparam += w * (zs - fy) * (zs - fy);
        r.mean_target += w * y;
      }
    }
    if (r.n_nonfinite > 0) {
      // Honest about it: one infinite prediction makes the mean squared error infinite.
      r.mse = std::numeric_limits<double>::infinity();
      r.mean_prediction = finite_weight > 0 ? r.mean_prediction / finite_weight
                                            : std::numeric_limits<double>::infinity();
    }
    results.push_back(r);
    if (on_length) on_length(l);
  }
  return results;
}

}  // namespace lenlab
