#pragma once
// Everything that defines one training run, as a user writes it (CLI flags, later config files),
// and its validated, parsed form. Every field has the default documented in `lenlab train --help`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "models/config.hpp"
#include "models/optimizer.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"

namespace lenlab {

struct TrainSpec {
  std::string task = "length";
  std::string pe = "nope";
  std::string reparam = "identity";
  std::string reparam_inverse;  // empty: closed form for built-ins, numerical for expressions
  double reparam_shift = 0.0;   // train on f(y + c)
  int l_train = 10;
  int l_test = 50;
  int steps = 2000;
  int batch_size = 64;
  uint64_t seed = 1;
  int n_layer = 2;
  int d_model = 64;
  int n_head = 4;
  int d_ff = 256;
  OptimizerConfig optimizer;
  int eval_samples = 500;         // per length; exact enumeration when 2^l is not larger
  uint64_t eval_seed = 20240601;  // fixed across runs so every run sees the same test sequences
  int threads = 1;
};

// The spec with names parsed and cross-checked.
struct ResolvedSpec {
  TaskKind task;
  ModelConfig model;
  Reparam reparam;
};

// Throws UsageError naming the first bad value and the valid choices.
ResolvedSpec resolve(const TrainSpec& spec);

nlohmann::ordered_json to_json(const TrainSpec& spec);

}  // namespace lenlab
