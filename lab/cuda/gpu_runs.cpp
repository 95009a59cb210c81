#include "lab/gpu_runs.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/rng.hpp"
#include "lab/device.hpp"
#include "lab/run_folder.hpp"
#include "models/cuda/ops.hpp"
#include "models/cuda/transformer_batch.hpp"
#include "models/optimizer.hpp"

namespace lenlab {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Rows (tokens, over all models) per evaluation forward: bounds activation memory while keeping
// the GPU busy. At the default sizes a row holds ~6 KB per layer, plus the attention
// probabilities (n_head·L floats per layer): about 3.5 GB per group at l_test 50.
constexpr size_t kEvalRowBudget = size_t{1} << 18;

// Training state shared by the group: AdamW's moments and the per-step buffers.
struct GroupOptimizer {
  GroupOptimizer(const ModelConfig& config, int n_models, int batch_size) {
    const size_t n = parameter_count(config) * n_models;
    m1.reserve_at_least(n);
    m2.reserve_at_least(n);
    m1.zero();
    m2.zero();
    const auto mask = weight_decay_mask<float>(config);
    decay_mask.upload(mask.data(), static_cast<size_t>(mask.size()));
    targets.reserve_at_least(static_cast<size_t>(n_models) * batch_size);
    dpred.reserve_at_least(static_cast<size_t>(n_models) * batch_size);
    loss.reserve_at_least(n_models);
    norms.reserve_at_least(n_models);
  }
  cuda::DeviceBuffer<float> m1, m2, decay_mask, dpred;
  cuda::DeviceBuffer<double> targets, loss, norms;
  cuda::DeviceBuffer<cuda::AdamWStep> steps;
};

cuda::AdamWStep adamw_settings(const OptimizerConfig& oc, double lr, int step) {
  // As AdamW<float>::step computes them (models/optimizer.cpp), steps counted from 1.
  const int t = step + 1;
  cuda::AdamWStep s;
  s.lr = static_cast<float>(lr);
  s.beta1 = static_cast<float>(oc.beta1);
  s.beta2 = static_cast<float>(oc.beta2);
  s.eps = static_cast<float>(oc.eps);
  s.decay = oc.weight_decay > 0 ? static_cast<float>(lr * oc.weight_decay) : 0.0f;
  s.c1 = static_cast<float>(1.0 / (1.0 - std::pow(oc.beta1, t)));
  s.c2 = static_cast<float>(1.0 / (1.0 - std::pow(oc.beta2, t)));
  s.clip_norm = oc.clip_norm;
  return s;
}

}  // namespace

std::vector<int> run_train_gpu_group(const std::vector<GpuJob>& jobs) {
  const int K = static_cast<int>(jobs.size());
  if (K == 0) return {};
  std::vector<ResolvedSpec> resolved;
  for (const GpuJob& j : jobs) {
    resolved.push_back(resolve(j.spec));
    if (gpu_group_key(j.spec) != gpu_group_key(jobs[0].spec))
      throw UsageError(
          "runs trained together on the GPU must share the model shape, positional "
          "encoding, steps and batch size");
  }
  const ResolvedDevice device = resolve_device(DeviceChoice::kCuda);
  const ModelConfig& config = resolved[0].model;
  const TrainSpec& first = jobs[0].spec;
  const int total_steps = first.steps, batch_size = first.batch_size;

  cuda::TransformerBatch model(config, K);
  const size_t P = model.num_parameters();
  std::vector<std::unique_ptr<RunFolder>> folders;
  for (int k = 0; k < K; ++k) {
    Transformer<float> init(resolved[k].model);  // the CPU's initialisation: same weights
    init.init(jobs[k].spec.seed);
    model.upload_parameters(k, init.params().data());
    folders.push_back(
        std::make_unique<RunFolder>(jobs[k].spec, resolved[k], jobs[k].options, device.label, P));
    folders.back()->manifest()["models_trained_together"] = K;
  }
  auto unit_done = [&](int k) {
    if (jobs[k].options.on_unit_done) jobs[k].options.on_unit_done();
  };
  // A group of one (`lenlab train --device cuda`) shows the CPU run's progress bars.
  std::ostream* log = K == 1 ? jobs[0].options.log : nullptr;
  std::optional<Progress> bar;
  if (log) bar.emplace("train", total_steps, *log, jobs[0].options.log_is_tty);

  // ---- training: every model takes the same steps as on the CPU (lab/trainer.cpp), in lockstep
  const auto train_start = Clock::now();
  GroupOptimizer opt(config, K, batch_size);
  std::vector<Rng> data_rng;
  for (const GpuJob& j : jobs) data_rng.push_back(Rng::stream(j.spec.seed, 1));
  std::vector<TrainOutcome> outcomes(K);
  for (TrainOutcome& o : outcomes) o.log.reserve(total_steps);
  std::vector<Batch> batches(K);
  std::vector<const Batch*> batch_ptrs;
  for (const Batch& b : batches) batch_ptrs.push_back(&b);
  std::vector<double> targets(static_cast<size_t>(K) * batch_size);
  std::vector<cuda::AdamWStep> settings(K);
  std::vector<double> lr(K);
  const cuda::Models models{K, P};
  int n_active = K;
  for (int step = 0; step < total_steps && n_active > 0; ++step) {
    for (int k = 0; k < K; ++k) {
      batches[k] =
          sample_train_batch(resolved[k].task, jobs[k].spec.l_train, batch_size, data_rng[k]);
      for (int s = 0; s < batch_size; ++s)
        targets[static_cast<size_t>(k) * batch_size + s] =
            resolved[k].reparam.forward(batches[k].targets[s]);
      lr[k] = scheduled_lr(jobs[k].spec.optimizer, step, total_steps);
      settings[k] = adamw_settings(jobs[k].spec.optimizer, lr[k], step);
    }
    model.forward(batch_ptrs);
    const cuda::DeviceBatches& packed = model.batches();
    opt.targets.upload(targets);
    cuda::mse_loss(model.predictions(), opt.targets.data(), nullptr, packed.n_seq_device.data(),
                   packed.seq_slots, opt.dpred.data(), opt.loss.data(), K);
    model.zero_grad();
    model.backward(opt.dpred.data());
    cuda::grad_norm(model.grads(), P, opt.norms.data(), models);
    opt.steps.upload(settings);
    cuda::adamw_step(model.params(), model.grads(), opt.m1.data(), opt.m2.data(),
                     opt.decay_mask.data(), opt.steps.data(), opt.norms.data(), opt.loss.data(), P,
                     models);
    const std::vector<double> loss = opt.loss.download(K), norm = opt.norms.download(K);
    for (int k = 0; k < K; ++k) {
      TrainOutcome& o = outcomes[k];
      if (o.diverged) continue;
      if (!std::isfinite(loss[k]) || !std::isfinite(norm[k])) {  // adamw_step left it untouched
        o.diverged = true;
        o.diverged_step = step + 1;
        --n_active;
        continue;
      }
      o.log.push_back({step + 1, lr[k], loss[k], norm[k]});
      unit_done(k);
    }
    if (bar) bar->update(step + 1, fmt::format("loss {:.3e}", loss[0]));
  }
  const double train_seconds = seconds_since(train_start);
  for (TrainOutcome& o : outcomes) o.seconds = train_seconds;
  if (bar) bar->finish();

  // ---- evaluation: all models at length l at once, each on its own task's evaluation set
  const auto eval_start = Clock::now();
  int l_max = 0;
  for (int k = 0; k < K; ++k)
    if (!outcomes[k].diverged) l_max = std::max(l_max, jobs[k].spec.l_test);
  if (log && l_max > 0) bar.emplace("eval", l_max, *log, jobs[0].options.log_is_tty);
  std::vector<std::vector<LengthResult>> results(K);
  for (int l = 1; l <= l_max; ++l) {
    std::map<std::tuple<TaskKind, int, uint64_t>, Batch> sets;  // runs share evaluation sets
    std::vector<const Batch*> full(K, nullptr);
    std::vector<std::optional<LengthScorer>> scorers(K);
    int n_max = 0, participating = 0;
    for (int k = 0; k < K; ++k) {
      if (outcomes[k].diverged || l > jobs[k].spec.l_test) continue;
      const TrainSpec& s = jobs[k].spec;
      const auto key = std::make_tuple(resolved[k].task, s.eval_samples, s.eval_seed);
      auto it = sets.find(key);
      if (it == sets.end())
        it = sets.emplace(key, eval_batch(resolved[k].task, l, s.eval_samples, s.eval_seed)).first;
      full[k] = &it->second;
      scorers[k].emplace(it->second, resolved[k].reparam, l);
      n_max = std::max(n_max, it->second.n_seq());
      ++participating;
    }
    const int chunk = static_cast<int>(std::clamp<size_t>(
        kEvalRowBudget / (static_cast<size_t>(participating) * (l + 2)), 1, n_max));
    for (int begin = 0; begin < n_max; begin += chunk) {
      std::vector<Batch> slices(K);
      std::vector<const Batch*> ptrs(K);
      for (int k = 0; k < K; ++k) {
        if (full[k] && begin < full[k]->n_seq())
          slices[k] = slice_batch(*full[k], begin, std::min(begin + chunk, full[k]->n_seq()));
        ptrs[k] = &slices[k];
      }
      model.forward(ptrs);
      const std::vector<float> z = model.download_predictions();
      const size_t S = model.batches().seq_slots;
      for (int k = 0; k < K; ++k)
        for (int s = 0; s < slices[k].n_seq(); ++s) scorers[k]->add(begin + s, z[k * S + s]);
    }
    for (int k = 0; k < K; ++k)
      if (scorers[k]) {
        results[k].push_back(scorers[k]->finish());
        unit_done(k);
      }
    if (bar) bar->update(l, fmt::format("length {}", l));
  }
  if (bar && l_max > 0) bar->finish();
  const double eval_seconds = seconds_since(eval_start);

  std::vector<int> codes(K, kExitOk);
  for (int k = 0; k < K; ++k) {
    if (outcomes[k].diverged) {
      folders[k]->write_diverged(outcomes[k]);
      codes[k] = kExitDiverged;
      continue;
    }
    Transformer<float> trained(resolved[k].model);
    const std::vector<float> params = model.download_parameters(k);
    std::copy(params.begin(), params.end(), trained.params().begin());
    folders[k]->write_completed(outcomes[k], results[k], eval_seconds, trained);
  }
  return codes;
}

}  // namespace lenlab
