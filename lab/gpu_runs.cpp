// The part of lab/gpu_runs.hpp every build has (the training itself is in lab/cuda/, built with
// the CUDA backend only).
#include "lab/gpu_runs.hpp"

#include <fmt/format.h>

namespace lenlab {

std::string gpu_group_key(const TrainSpec& spec) {
  const bool learned = spec.pe == "learned";  // its table has l_test + 2 rows
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", spec.n_layer, spec.d_model, spec.n_head, spec.d_ff,
                     spec.pe, learned ? spec.l_test : 0, spec.steps, spec.batch_size);
}

}  // namespace lenlab
