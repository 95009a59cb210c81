#include "lab/run/init_from.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "models/checkpoint.hpp"
#include "models/parameters.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "tasks/task.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

std::string task_kind(const std::string& task) {
  return is_token_task(parse_task(task)) ? "token task" : "scalar task";
}

// UsageError naming the first thing the parent's weights cannot be for the child's model.
void check_fits(const ParentRun& parent, const TrainSpec& child_spec, const ModelConfig& child) {
  const std::string where = fmt::format("--init-from {}", parent.dir.string());
  const ModelConfig& p = parent.model;
  if (task_kind(parent.spec.task) != task_kind(child_spec.task))
    throw UsageError(fmt::format(
        "{}: that run trained the {} '{}', this one is the {} '{}'; a model with the other head "
        "and vocabulary cannot start it. Fine-tune a {} run",
        where, task_kind(parent.spec.task), parent.spec.task, task_kind(child_spec.task),
        child_spec.task, task_kind(child_spec.task)));
  if (p.pe != child.pe || p.pe_bias != child.pe_bias)
    throw UsageError(fmt::format(
        "{}: that run's positional encoding is '{}'{}, this one's '{}'{}; fine-tuning keeps the "
        "encoding (its RoPE scaling and FIRE threshold may change): give --pe {}",
        where, positional_encoding_name(p.pe), p.pe_bias.empty() ? "" : " " + p.pe_bias,
        positional_encoding_name(child.pe), child.pe_bias.empty() ? "" : " " + child.pe_bias,
        positional_encoding_name(p.pe)));
  for (const auto& [flag, theirs, ours] :
       {std::tuple{"--n-layer", p.n_layer, child.n_layer},
        std::tuple{"--d-model", p.d_model, child.d_model},
        std::tuple{"--n-head", p.n_head, child.n_head}, std::tuple{"--d-ff", p.d_ff, child.d_ff},
        std::tuple{"the vocabulary (--n-symbols)", p.vocab_size, child.vocab_size},
        std::tuple{"--t5-buckets", p.t5_buckets, child.t5_buckets},
        std::tuple{"--t5-per-layer", static_cast<int>(p.t5_per_layer),
                   static_cast<int>(child.t5_per_layer)},
        std::tuple{"--fire-width", p.fire_width, child.fire_width}})
    if (theirs != ours)
      throw UsageError(fmt::format(
          "{}: that run's model has {} {}, this one {}; its weights fit a model of its own shape "
          "only: give {} {}",
          where, flag, theirs, ours, flag, theirs));
  // Whatever else differs (a setting added later) shows as a tensor of another shape.
  const auto theirs = parameter_layout(p), ours = parameter_layout(child);
  for (size_t i = 0; i < std::max(theirs.size(), ours.size()); ++i) {
    const bool same = i < theirs.size() && i < ours.size() && theirs[i].name == ours[i].name &&
                      (theirs[i].shape == ours[i].shape || theirs[i].name == "wpe");
    if (!same)
      throw UsageError(fmt::format("{}: that run's weights do not fit this run's model ({})", where,
                                   i < ours.size() ? "tensor " + ours[i].name : "extra tensors"));
  }
}

}  // namespace

ParentRun load_parent(const TrainSpec& child) {
  const fs::path dir = child.init_from;
  const std::string where = fmt::format("--init-from {}", dir.string());
  if (!fs::is_directory(dir))
    throw UsageError(fmt::format(
        "{}: no such folder; give the folder of a completed run (lenlab train's --out, or "
        "runs/<run id> of a sweep)",
        where));
  std::optional<RunRecord> record;
  try {
    record = load_run(dir, /*with_results=*/false);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: its manifest cannot be read: {}", where, e.what()));
  }
  if (!record)
    throw UsageError(fmt::format(
        "{}: holds no run (no manifest.json); give the folder of a completed run", where));
  if (record->status == "running")
    throw UsageError(fmt::format(
        "{}: that run is 'running' (training now, or killed before it finished), so its "
        "weights are not final; let it finish, or train it again, then fine-tune it",
        where));
  if (record->status != "completed")
    throw UsageError(
        fmt::format("{}: that run is '{}'; only a completed run has weights to start from", where,
                    record->status));
  if (!fs::exists(dir / "model.safetensors"))
    throw UsageError(fmt::format(
        "{}: that run has no model.safetensors; its folder is incomplete, train it again", where));
  if (struct stat st{};
      ::stat((dir / "model.safetensors").c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw UsageError(fmt::format("{}: its model.safetensors is {}, not a regular file", where,
                                 file_type_name(st.st_mode)));
  // The parent's settings as its manifest holds them: one it cannot have is that file's mistake.
  const std::string manifest = where + ": " + (dir / "manifest.json").string();
  ParentRun parent{dir, record->spec, run_id(record->spec),
                   in_source(manifest, [&] { return model_config(record->spec); })};
  check_fits(parent, child, model_config(child));
  return parent;
}

TrainSpec with_parent_id(const TrainSpec& child) {
  TrainSpec out = child;
  out.init_parent = child.init_from.empty() ? "" : load_parent(child).id;
  return out;
}

std::vector<double> parent_weights(const ParentRun& parent, const ModelConfig& child,
                                   std::vector<double> fresh) {
  std::vector<double> theirs;
  try {
    theirs = load_checkpoint(parent.dir / "model.safetensors", parent.model);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--init-from {}: {}", parent.dir.string(), e.what()));
  }
  const auto from = parameter_layout(parent.model), to = parameter_layout(child);
  for (size_t i = 0; i < to.size(); ++i) {  // the same names in the same order (check_fits)
    // A learned position table: the parent's rows [rows, d] first, the fresh ones past them.
    const size_t n = std::min(from[i].size, to[i].size);
    std::copy_n(theirs.begin() + from[i].offset, n, fresh.begin() + to[i].offset);
  }
  return fresh;
}

}  // namespace lenlab
