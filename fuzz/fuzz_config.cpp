// libFuzzer target: experiment configs, read the way `lenlab run CONFIG` reads them before it
// trains anything: parse_experiment_config, plan_runs over the config's seeds, then resolve() of
// every planned run (names, sizes, optimizer settings, the reparam and its domain check).
//
// A UsageError is the expected answer to a bad config. Anything else is a finding: a crash, a
// sanitizer report, another exception type escaping (libFuzzer reports it as a deadly signal), a
// hang or unbounded memory.
//
// Work caps (so that the fuzzer explores parsing rather than waits on huge plans; each skips work,
// never an input):
// - a config whose plan has more than kMaxPlannedRuns (figure line x seed) pairs is parsed and
//   validated, but not planned;
// - of the planned runs, only the first kMaxResolvedSpecs distinct settings (seeds ignored, as
//   resolve() does not read them) are resolved;
// - a run is not resolved when its domain check would evaluate f at more than kMaxTargets target
//   values (fuzz/fuzz_caps.hpp).
//
// Also replayed over fuzz/corpus/config/ by the normal test suite (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz/fuzz_caps.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "train/run_settings.hpp"

namespace {

constexpr size_t kMaxPlannedRuns = 512;
constexpr size_t kMaxResolvedSpecs = 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  lenlab::ExperimentConfig config;
  try {
    config = lenlab::parse_experiment_config(text, "fuzz.toml");
  } catch (const lenlab::UsageError&) {
    return 0;
  }
  size_t planned = 0;
  for (const lenlab::FigureSpec& fig : config.figures) planned += fig.values.size();
  if (planned * config.seeds.size() > kMaxPlannedRuns) return 0;
  std::vector<lenlab::PlannedRun> runs;
  try {
    runs = lenlab::plan_runs(config, {}, config.seeds);
  } catch (const lenlab::UsageError&) {
    return 0;
  }
  std::set<std::string> resolved;
  for (const lenlab::PlannedRun& run : runs) {
    if (resolved.size() >= kMaxResolvedSpecs) break;
    lenlab::TrainSpec spec = run.spec;
    spec.seed = 0;
    if (lenlab::fuzz::target_count(spec) > lenlab::fuzz::kMaxTargets) continue;
    if (!resolved.insert(lenlab::canonical_spec_text(spec)).second) continue;
    try {
      (void)lenlab::resolve(run.spec);
    } catch (const lenlab::UsageError&) {
    }
  }
  return 0;
}
