#include "lab/train_spec.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {

ResolvedSpec resolve(const TrainSpec& s) {
  const TaskKind task = parse_task(s.task);
  ModelConfig model;
  model.pe = parse_positional_encoding(s.pe);
  if (s.l_train < 1)
    throw UsageError(fmt::format("--l-train must be a positive integer, got {}", s.l_train));
  if (s.l_test < s.l_train)
    throw UsageError(
        fmt::format("--l-test ({}) must be at least --l-train ({})", s.l_test, s.l_train));
  if (s.batch_size < 1)
    throw UsageError(fmt::format("--batch must be a positive integer, got {}", s.batch_size));
  if (s.eval_samples < 1)
    throw UsageError(
        fmt::format("--eval-samples must be a positive integer, got {}", s.eval_samples));
  if (s.threads < 1)
    throw UsageError(fmt::format("--threads must be a positive integer, got {}", s.threads));
  if (!std::isfinite(s.reparam_shift))
    throw UsageError(fmt::format("--reparam-shift must be finite, got {}", s.reparam_shift));
  s.optimizer.validate(s.steps);
  model.n_layer = s.n_layer;
  model.d_model = s.d_model;
  model.n_head = s.n_head;
  model.d_ff = s.d_ff;
  model.max_positions = s.l_test + 2;  // BOS + l_test bits + EOS
  model.validate();
  Reparam reparam = Reparam::make(s.reparam, s.reparam_inverse, s.reparam_shift);
  // f is applied to training targets and inverted on test outputs: check it on all of them.
  reparam.check_domain(task_target_values(task, 1, s.l_test), s.task);
  return {task, model, std::move(reparam)};
}

nlohmann::ordered_json to_json(const TrainSpec& s) {
  const OptimizerConfig& o = s.optimizer;
  return {
      {"task", s.task},
      {"pe", s.pe},
      {"reparam", s.reparam},
      {"reparam_inverse", s.reparam_inverse},
      {"reparam_shift", s.reparam_shift},
      {"l_train", s.l_train},
      {"l_test", s.l_test},
      {"steps", s.steps},
      {"batch_size", s.batch_size},
      {"seed", s.seed},
      {"model",
       {{"n_layer", s.n_layer}, {"d_model", s.d_model}, {"n_head", s.n_head}, {"d_ff", s.d_ff}}},
      {"optimizer",
       {{"lr", o.lr},
        {"beta1", o.beta1},
        {"beta2", o.beta2},
        {"eps", o.eps},
        {"weight_decay", o.weight_decay},
        {"warmup_steps", o.warmup_steps},
        {"min_lr_ratio", o.min_lr_ratio},
        {"clip_norm", o.clip_norm}}},
      {"eval_samples", s.eval_samples},
      {"eval_seed", s.eval_seed},
      {"threads", s.threads},
  };
}

}  // namespace lenlab
