#include "train/train_spec.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <type_traits>

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
  model.vocab_size = task_vocab_size(task);
  model.validate();
  Reparam reparam = Reparam::make(s.reparam, s.reparam_inverse, s.reparam_shift);
  // f is applied to training targets and inverted on test outputs: check it on all of them.
  reparam.check_domain(task_target_values(task, 1, s.l_test), s.task);
  return {task, model, std::move(reparam)};
}

nlohmann::ordered_json to_json(const TrainSpec& spec) {
  nlohmann::ordered_json j;
  visit_spec_fields(spec, [&](const char* key, const auto& value) { j[key] = value; });
  return j;
}

namespace {

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, int>) return "an integer";
  if constexpr (std::is_same_v<T, uint64_t>) return "a non-negative integer";
  if constexpr (std::is_same_v<T, double>) return "a number";
}

}  // namespace

TrainSpec spec_from_json(const nlohmann::ordered_json& j, const TrainSpec& base,
                         const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: expected a table of settings", where));
  TrainSpec spec = base;
  std::vector<std::string> keys;
  visit_spec_fields(spec, [&](const char* key, auto&) { keys.emplace_back(key); });
  for (const auto& [key, value] : j.items()) {
    bool found = false;
    visit_spec_fields(spec, [&](const char* name, auto& field) {
      using T = std::decay_t<decltype(field)>;
      if (key != name) return;
      found = true;
      bool ok = false;
      if constexpr (std::is_same_v<T, std::string>) ok = value.is_string();
      if constexpr (std::is_same_v<T, int>)
        ok = value.is_number_integer() && value.template get<int64_t>() >= INT32_MIN &&
             value.template get<int64_t>() <= INT32_MAX;
      if constexpr (std::is_same_v<T, uint64_t>)
        ok = value.is_number_unsigned() ||
             (value.is_number_integer() && value.template get<int64_t>() >= 0);
      if constexpr (std::is_same_v<T, double>) ok = value.is_number();
      if (!ok)
        throw UsageError(
            fmt::format("{}: '{}' must be {}, got {}", where, key, type_name<T>(), value.dump()));
      field = value.template get<T>();
    });
    if (!found)
      throw UsageError(fmt::format("{}: unknown setting '{}'; valid settings: {}", where, key,
                                   join_choices(keys)));
  }
  return spec;
}

std::string canonical_spec_text(const TrainSpec& spec) {
  return to_json(spec).dump();
}

}  // namespace lenlab
