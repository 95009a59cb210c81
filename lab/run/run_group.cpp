#include "lab/run/run_group.hpp"

#include <fmt/format.h>

#include <utility>

#include "train/run_settings.hpp"

namespace lenlab {

namespace {

// One model: the same parameter layout and computation (shape, encoding and its settings,
// vocabulary, heads, a learned table's rows), in one precision, stepped in lockstep.
std::string group_key(const ModelConfig& model, const TrainSpec& spec) {
  return fmt::format("{}|{}|{}|{}", model.key(), spec.steps, spec.batch_size, spec.precision);
}

}  // namespace

GroupJob::GroupJob(TrainSpec spec_, RunOptions options_)
    : spec(std::move(spec_)), resolved(resolve(spec)), options(std::move(options_)) {}

GroupJob::GroupJob(TrainSpec spec_, ResolvedSpec resolved_, RunOptions options_)
    : spec(std::move(spec_)), resolved(std::move(resolved_)), options(std::move(options_)) {}

std::string gpu_group_key(const TrainSpec& spec) {
  return group_key(model_config(spec), spec);
}

std::string gpu_group_key(const GroupJob& job) {
  return group_key(job.resolved.model, job.spec);
}

}  // namespace lenlab
