#pragma once
// train()'s definition (train/trainer.hpp), instantiated per backend: train/trainer.cpp (CPU),
// train/cuda/instantiate.cpp (CUDA builds).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/rng.hpp"
#include "models/optimizer.hpp"
#include "models/step_capture.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/misalign_regularizer.hpp"
#include "train/random_positions.hpp"
#include "train/trainer.hpp"

namespace lenlab {

template <class B>
std::vector<TrainOutcome> train(Model<B>& model, const std::vector<TrainJob>& jobs,
                                const std::function<void(int, int, double)>& on_step,
                                const StopCheck& stop) {
  using T = typename B::Scalar;
  const int K = model.n_models();
  if (static_cast<int>(jobs.size()) != K)
    throw std::invalid_argument("train: one job per model is needed");
  const auto start = std::chrono::steady_clock::now();
  const int steps = jobs[0].spec->steps, batch_size = jobs[0].spec->batch_size;
  const size_t P = model.num_parameters();
  const ops::Models models = model.models();

  // The optimizer's state, in the backend's memory: AdamW's moments per model, one decay mask.
  typename B::template Buffer<T> m1, m2, decay_mask, dscalar, dlogits;
  typename B::template Buffer<double> targets, loss, token_loss, pair_loss, norms;
  typename B::template Buffer<ops::AdamWStep> settings_dev;
  for (auto* v : {&m1, &m2}) {
    B::reserve(*v, P * K);
    B::fill_zero(v->data(), P * K);
  }
  const auto mask = weight_decay_mask<T>(model.config());
  B::upload(decay_mask, mask.data(), P);
  for (auto* v : {&loss, &token_loss, &pair_loss, &norms}) B::reserve(*v, K);

  std::vector<TrainOutcome> outcomes(K);
  std::vector<Rng> data_rng;  // data has its own stream: a model's size never changes its data
  for (const TrainJob& j : jobs) data_rng.push_back(Rng::stream(j.spec->seed, 1));
  std::vector<Batch> batches(K);
  std::vector<const Batch*> batch_ptrs;
  for (const Batch& b : batches) batch_ptrs.push_back(&b);
  std::vector<ops::AdamWStep> settings(K);
  std::vector<double> lr(K), host_targets, host_loss(K), host_token(K, 0.0), host_pairs(K, 0.0),
      host_norms(K);
  PackedBatch<B> packed;
  // Declared after every buffer its graphs read, so that it is destroyed first.
  typename B::StepGraphs step_graphs(B::kDevice && cuda_graphs_requested() &&
                                     model.step_is_device_only());
  int n_active = K;
  // training[k]: model k neither diverged nor stopped. A stopped model still steps with the group
  // (the models are one computation); its weights at the stop are kept here and put back at the
  // end.
  std::vector<char> training(K, 1);
  std::vector<std::vector<T>> kept(K);
  for (int step = 0; step < steps && n_active > 0; ++step) {
    for (int k = 0; k < K; ++k) {
      const TrainJob& j = jobs[k];
      const ResolvedSpec& r = *j.resolved;
      if (j.spec->misalign.views())
        batches[k] = misalign_train_batch(j.spec->token, *r.chain, j.spec->l_train, batch_size,
                                          j.spec->misalign, data_rng[k]);
      else if (is_token_task(r.task))
        batches[k] = token_train_batch(r.task, j.spec->token, r.chain.get(), j.spec->l_train,
                                       batch_size, data_rng[k], r.train_lengths.lo);
      else
        batches[k] = sample_train_batch(r.task, j.spec->l_train, batch_size, data_rng[k],
                                        r.train_lengths.lo);
      apply_vcl(batches[k], j.spec->vcl, data_rng[k]);
      if (j.spec->random_positions > 0)
        randomize_positions(batches[k], j.spec->random_positions, data_rng[k]);
      lr[k] = scheduled_lr(j.spec->optimizer, step, steps);
      settings[k] = adamw_settings(j.spec->optimizer, lr[k], step);
    }
    packed.pack(batch_ptrs, model.config());
    const int R = packed.n_scalar, V = model.config().vocab_size;
    host_targets.assign(static_cast<size_t>(K) * R, 0.0);
    // f of a whole batch at once: a reparam registered from Python is one call per batch.
    for (int k = 0; k < K; ++k)
      jobs[k].resolved->reparam.forward_many(batches[k].targets.data(),
                                             host_targets.data() + static_cast<size_t>(k) * R,
                                             static_cast<size_t>(batches[k].n_read()));
    for (int k = 0; k < K; ++k) {
      TrainOutcome& o = outcomes[k];
      const double* fy = host_targets.data() + static_cast<size_t>(k) * R;
      for (int i = 0; i < batches[k].n_read() && training[k]; ++i)
        if (!std::isfinite(fy[i])) {  // the loss would say only "non-finite"; say why
          o.diverged = true;
          o.diverged_step = step + 1;
          o.diverged_reason = fmt::format(
              "reparam '{}' is {} at the training target y = {} (step {}); choose a reparam that "
              "is finite on every target of the task, or a --reparam-shift",
              jobs[k].spec->reparam, fy[i], batches[k].targets[i], step + 1);
          training[k] = 0;
          --n_active;
        }
    }
    for (int k = 0; k < K; ++k)
      if (jobs[k].on_batch && training[k])
        jobs[k].on_batch(step + 1, batches[k], host_targets.data() + static_cast<size_t>(k) * R);
    // Everything the step reads from the host, uploaded before it: its device work below may be
    // replayed as a CUDA graph (models/cuda/step_graphs.hpp), which copies nothing.
    B::upload(targets, host_targets.data(), host_targets.size());
    B::upload(settings_dev, settings.data(), settings.size());
    std::vector<int64_t> step_key;  // every size the step's launches depend on
    if (step_graphs.enabled()) {
      model.prepare(packed);
      step_key = packed.shape_key();
      const std::vector<int64_t> tables = model.table_sizes();
      step_key.insert(step_key.end(), tables.begin(), tables.end());
    }

    // The step on the device: forward, losses, backward, clipping and AdamW.
    step_graphs.run(step_key, [&] {
      model.forward(packed);
      const double* losses = nullptr;
      if (R > 0) {
        B::reserve(dscalar, static_cast<size_t>(K) * R);
        B::mse_loss(dscalar.data(), loss.data(), model.scalar_out(), targets.data(),
                    packed.scalar_weights.data(), R, models);
        losses = loss.data();
      }
      if (packed.n_token > 0) {
        B::reserve(dlogits, static_cast<size_t>(K) * packed.n_token * V);
        B::cross_entropy_loss(dlogits.data(), token_loss.data(), model.token_logits(),
                              packed.token_labels.data(), packed.token_weights.data(),
                              packed.n_token, V, models);
        if (!losses) losses = token_loss.data();
      }
      if (packed.n_pairs > 0)  // adds into dlogits; a non-finite pair loss shows in the norm
        B::pair_alignment_loss(dlogits.data(), pair_loss.data(), model.token_logits(),
                               packed.pair_first.data(), packed.pair_second.data(),
                               packed.pair_weights.data(), packed.pair_entropy_weights.data(),
                               packed.n_pairs, packed.n_token, V, models);
      model.zero_grad();
      model.backward(packed, R > 0 ? dscalar.data() : nullptr,
                     packed.n_token > 0 ? dlogits.data() : nullptr);
      B::grad_norm(norms.data(), model.grads(), P, models);
      B::adamw_step(model.params(), model.grads(), m1.data(), m2.data(), decay_mask.data(),
                    settings_dev.data(), norms.data(), losses, P, models);
    });
    if (R > 0) B::download(host_loss.data(), loss.data(), K);
    if (packed.n_token > 0) B::download(host_token.data(), token_loss.data(), K);
    if (packed.n_pairs > 0) B::download(host_pairs.data(), pair_loss.data(), K);
    B::download(host_norms.data(), norms.data(), K);
    for (int k = 0; k < K; ++k) {
      TrainOutcome& o = outcomes[k];
      if (!training[k]) continue;  // diverged, or stopped: its steps since are not its own
      const double pairs = packed.n_pairs > 0 ? host_pairs[k] : 0.0;  // α·L_misalign
      const double total = (R > 0 ? host_loss[k] : 0.0) + host_token[k] + pairs;
      if (!std::isfinite(total) || !std::isfinite(host_norms[k])) {  // adamw_step skipped it
        o.diverged = true;
        o.diverged_step = step + 1;
        training[k] = 0;
        --n_active;
        continue;
      }
      o.log.push_back({step + 1, lr[k], total, host_norms[k], pairs});
      if (on_step) on_step(k, step + 1, total);
    }
    if (stop && n_active > 0) {
      const std::vector<char> now = stop(step + 1, training);
      for (int k = 0; k < K; ++k)
        if (training[k] && k < static_cast<int>(now.size()) && now[k]) {
          outcomes[k].stopped_step = step + 1;
          kept[k] = model.parameters(k);
          training[k] = 0;
          --n_active;
        }
    }
  }
  for (int k = 0; k < K; ++k)
    if (!kept[k].empty()) model.set_parameters(k, kept[k].data());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (TrainOutcome& o : outcomes) o.seconds = seconds;
  return outcomes;
}

}  // namespace lenlab
