#include "lab/run/run_group.hpp"

#include <fmt/format.h>

#include "train/train_spec.hpp"

namespace lenlab {

std::string gpu_group_key(const TrainSpec& spec) {
  // One model: the same parameter layout and computation (shape, encoding and its settings,
  // vocabulary, heads, a learned table's rows), in one precision, stepped in lockstep.
  return fmt::format("{}|{}|{}|{}", model_config(spec).key(), spec.steps, spec.batch_size,
                     spec.precision);
}

}  // namespace lenlab
