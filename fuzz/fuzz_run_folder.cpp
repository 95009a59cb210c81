// libFuzzer target: a run folder, read the way `lenlab eval RUN_DIR` and `--init-from RUN_DIR`
// read it before any work. The input is split into the folder's two files: its first 4 bytes are
// the length N of manifest.json (little-endian, cut to what follows), the next N bytes are
// manifest.json and the rest is model.safetensors; an input shorter than 4 bytes is an empty
// folder. Both are written to a scratch folder (the loaders read files), then:
//   - load_safetensors of model.safetensors on its own (any tensors, any metadata);
//   - load_run(dir, manifest only), and for a completed run what `lenlab eval` does: the plan
//     (plan_evaluation, resolve() at the run's test lengths), the budget (admit_evaluation)
//     and load_checkpoint of the weights for the run's model;
//   - what `--init-from dir` does for a child with the run's own settings: load_parent, then
//     parent_weights (load_checkpoint for the parent's model, copied over the child's).
//
// A UsageError is the expected answer to a bad folder (the loaders' documented error, lenlab's exit
// status 2). Anything else is a finding: a crash, a sanitizer report, another exception escaping
// (libFuzzer reports it as a deadly signal), a hang or unbounded memory.
//
// Work caps (each skips work, never an input): a run is not resolved when its domain check would
// evaluate f at more than kMaxTargets targets (fuzz/fuzz_caps.hpp); the evaluation's budget is
// --max-memory 1G (kBudgetMemory); the weights are not loaded for a model of more than
// kMaxParameters parameters. Nothing is trained or evaluated.
//
// Also replayed over fuzz/corpus/run_folder/ by the normal test suite (fuzz/replay_main.cpp).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "cost/admission.hpp"
#include "cost/budget.hpp"
#include "fuzz/fuzz_caps.hpp"
#include "fuzz/scratch_folder.hpp"
#include "lab/run/init_from.hpp"
#include "models/checkpoint.hpp"
#include "models/parameters.hpp"
#include "models/safetensors.hpp"
#include "results/run_record.hpp"
#include "train/eval_plan.hpp"
#include "train/run_settings.hpp"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxParameters = size_t{1} << 22;  // 32 MB of doubles
constexpr const char* kBudgetMemory = "1G";

// A scratch folder for this process, removed at exit.
void write_file(const fs::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz_run_folder: cannot write %s\n", path.c_str());
    std::abort();
  }
}

// The folder's two files from the input (none when it is shorter than 4 bytes).
void write_folder(const fs::path& dir, const uint8_t* data, size_t size) {
  std::error_code ec;
  fs::remove(dir / "manifest.json", ec);
  fs::remove(dir / "model.safetensors", ec);
  if (size < 4) return;
  uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = n << 8 | data[i];
  const size_t manifest = std::min<size_t>(n, size - 4);
  write_file(dir / "manifest.json", data + 4, manifest);
  write_file(dir / "model.safetensors", data + 4 + manifest, size - 4 - manifest);
}

bool within_caps(const lenlab::TrainSpec& spec) {
  if (lenlab::fuzz::target_count(spec) > lenlab::fuzz::kMaxTargets) return false;
  try {
    return lenlab::parameter_count(lenlab::model_config(spec)) <= kMaxParameters;
  } catch (const lenlab::UsageError&) {
    return true;  // resolve() names the problem
  }
}

// lenlab eval RUN_DIR, up to the evaluation itself (lab/run/eval_run.cpp).
void evaluate(const fs::path& dir, const lenlab::TrainSpec& trained) {
  const lenlab::EvalChanges changes;
  lenlab::check_eval_changes(changes);
  const lenlab::EvalPlan plan = lenlab::plan_evaluation(trained, changes);
  lenlab::Budget budget;
  budget.max_memory = kBudgetMemory;
  lenlab::ResolvedSpec evaluated = plan.resolved;
  evaluated.model = plan.trained.model;
  lenlab::admit_evaluation(lenlab::CostedRun(plan.spec, std::move(evaluated)), budget, {}, {});
  if (lenlab::parameter_count(plan.trained.model) > kMaxParameters) return;
  (void)lenlab::load_checkpoint(dir / "model.safetensors", plan.trained.model);
}

// lenlab train --init-from DIR with the run's own settings (lab/run/init_from.hpp).
void init_from(const fs::path& dir, const lenlab::TrainSpec& trained) {
  lenlab::TrainSpec child = trained;
  child.init_from = dir.string();
  child.init_parent.clear();
  const lenlab::ParentRun parent = lenlab::load_parent(child);
  const lenlab::ModelConfig model = lenlab::resolve(child).model;
  if (lenlab::parameter_count(model) > kMaxParameters ||
      lenlab::parameter_count(parent.model) > kMaxParameters)
    return;
  (void)lenlab::parent_weights(parent, model,
                               std::vector<double>(lenlab::parameter_count(model), 0.0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const lenlab::fuzz::ScratchFolder scratch("fuzz_run_folder");
  const fs::path& dir = scratch.dir;
  write_folder(dir, data, size);
  try {
    (void)lenlab::load_safetensors(dir / "model.safetensors");
  } catch (const lenlab::UsageError&) {
  }
  std::optional<lenlab::RunRecord> record;
  try {
    record = lenlab::load_run(dir, /*with_results=*/false);
  } catch (const lenlab::UsageError&) {
    return 0;
  }
  if (!record || record->status != "completed" || !within_caps(record->spec)) return 0;
  try {
    evaluate(dir, record->spec);
  } catch (const lenlab::UsageError&) {
  }
  try {
    init_from(dir, record->spec);
  } catch (const lenlab::UsageError&) {
  }
  return 0;
}
